// Drivers: one folder per device or service, each with a real and a simulated backend.
import Protocol
