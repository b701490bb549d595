// Crypto self-test run by `carkey-agent demo`.
//
// TODO(crypto): fill in runCryptoSelfTest() with known-answer checks against
// Protocol's crypto core (P-256 ECDSA sign/verify, ECDH, HKDF, AES-GCM, ...).
// It is deliberately an empty stub until that code lands.

/// Runs the crypto self-test and returns one result per check, in order.
/// An empty list means no checks are wired up yet.
func runCryptoSelfTest() -> [(name: String, passed: Bool)] {
    // STUB: no checks yet.
    return []
}
