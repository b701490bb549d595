// The seam between GPIO logic and hardware: a libgpiod backend on the car, a simulated one in
// tests and --simulate. Values are logical ("active"); active-low is applied by the backend.

public protocol GPIOBackend: Sendable {
    /// Requests `config` as an output whose first level is inactive. There is deliberately no way
    /// to request an output active: the inactive level is the safe one (relay off), and it is also
    /// what the line falls back to when the process exits and libgpiod releases it.
    func requestOutput(_ config: GPIOLineConfig, role: String) throws(GPIOError) -> any GPIOOutputLine

    /// Requests `config` as an input with the configured bias, reporting both edges on its
    /// `edgeDescriptor` where the chip can.
    func requestInput(_ config: GPIOLineConfig, role: String) throws(GPIOError) -> any GPIOInputLine
}

public protocol GPIOOutputLine: Sendable {
    var reference: GPIOLineReference { get }
    func setActive(_ active: Bool) throws(GPIOError)
    /// Reads the level back from the driver (for the console's `gpio` command).
    func isActive() throws(GPIOError) -> Bool
    /// Gives the line back to the kernel; later calls fail with `.released`.
    func release()
}

public protocol GPIOInputLine: Sendable {
    var reference: GPIOLineReference { get }
    func isActive() throws(GPIOError) -> Bool
    /// Becomes readable when the level changed (an edge either way), so a loop sleeps on it
    /// instead of sampling; nil when this line cannot report edges and must be sampled.
    var edgeDescriptor: FileDescriptor? { get }
    /// Consumes the edges reported so far (the descriptor is quiet again until the next one);
    /// returns how many there were. Read the level afterwards, never the other way round, so
    /// an edge between the two is never lost.
    func drainEdges() throws(GPIOError) -> Int
    func release()
}

/// The consumer string shown by `gpioinfo`, so a busy line can be traced to this agent and role.
/// libgpiod v1.6 truncates consumers to 31 bytes.
func gpioConsumer(role: String) -> String { String("carkey:\(role)".utf8.prefix(31)) ?? "carkey" }
