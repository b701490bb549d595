// The raw crypto of one car-side handshake plus one command (ock_bench_evp_handshake_crypto:
// the same primitive operations the car engine performs, see HandshakeCrypto.c) as direct EVP
// calls in C, timed with this thread's CPU clock. It is the "what the crypto alone costs" reference for the handshake benchmark and for
// the agent-path benchmark's CPU per session.
import CBenchReference
import Protocol

/// Thread-CPU microseconds per car-side handshake of raw EVP crypto: the smallest and the
/// median over `rounds` rounds of `handshakesPerRound` handshakes each.
func rawHandshakeCryptoCost(rounds: Int) -> (minMicros: Double, medianMicros: Double) {
    let inputs: HandshakeReferenceInputs
    do {
        inputs = try HandshakeReferenceInputs(identity: try P256PrivateKey.generate(), phoneKey: try P256PrivateKey.generate())
    } catch {
        preconditionFailure("cannot make reference handshake inputs: \(error)")
    }
    var micros = RoundFigures()
    for _ in 0..<max(1, rounds) { micros.append(inputs.cpuMicrosPerHandshake(iterations: HandshakeReferenceInputs.handshakesPerRound)) }
    return (micros.min, micros.median)
}

/// Valid inputs for the C loop: phone ephemeral points and signatures by the phone key, 16 of
/// each, cycled through.
struct HandshakeReferenceInputs {
    static let handshakesPerRound = 200
    let identityPKCS8: Bytes
    let phoneSPKI: Bytes
    let points: Bytes
    let signedData: Bytes
    let signatures: Bytes
    let lengths: [Int]
    let count = 16
    let stride = 72

    init(identity: P256PrivateKey, phoneKey: P256PrivateKey) throws {
        identityPKCS8 = try identity.pkcs8DER()
        phoneSPKI = phoneKey.publicKey.spkiDER
        var points = Bytes(), signedData = Bytes(), signatures = Bytes(), lengths: [Int] = []
        for i in 0..<count {
            points += try P256PrivateKey.generate().publicKey.sec1
            let data = Bytes(repeating: UInt8(i), count: 32) + [0x01, 0xb9, 0x55, 0x69]
            let signature = try phoneKey.signature(for: data).derRepresentation
            signedData += data
            signatures += signature + Bytes(repeating: 0, count: stride - signature.count)
            lengths.append(signature.count)
        }
        self.points = points
        self.signedData = signedData
        self.signatures = signatures
        self.lengths = lengths
    }

    /// Runs `iterations` handshakes; how many completed (all of them, or the C side failed).
    func run(iterations: Int) -> Int {
        ock_bench_evp_handshake_crypto(identityPKCS8, identityPKCS8.count, phoneSPKI, phoneSPKI.count,
                                       points, signedData, signatures, stride, lengths, count, iterations)
    }

    /// Thread-CPU microseconds per handshake over one batch; stops the benchmark if any failed.
    func cpuMicrosPerHandshake(iterations: Int) -> Double {
        var completed = 0
        let seconds = Bench.cpuSeconds { completed = run(iterations: iterations) }
        precondition(completed == iterations, "reference handshakes failed: \(completed) of \(iterations)")
        return seconds * 1e6 / Double(iterations)
    }
}
