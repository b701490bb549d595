// Crypto self-test run by `carkey-agent demo` (and before the agent serves phones).
import Protocol

/// Runs the crypto known-answer tests and returns one result per check, in order.
func runCryptoSelfTest() -> [(name: String, passed: Bool)] {
    CryptoSelfTest.run().map { ($0.name, $0.passed) }
}
