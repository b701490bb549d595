// ECDSA P-256 verifications per second: through Protocol's Swift layer and through direct
// EVP calls in C, on the same key and messages, interleaved in rounds so drift hits both.
import CBenchReference
import Protocol

enum ECDSAVerifyBench {
    static func run(rounds: Int = 15, iterationsPerRound: Int = 1000) throws {
        let key = try P256PrivateKey.generate()
        let count = 16
        let messages = (0..<count).map { i in Bytes(repeating: UInt8(i), count: 64) }
        let signatures = try messages.map { try key.signature(for: $0) }
        let publicKey = key.publicKey

        // Packed inputs for the C loop.
        let flatMessages = messages.flatMap { $0 }
        let stride = 72
        let flatSignatures = signatures.flatMap { $0.derRepresentation + Bytes(repeating: 0, count: stride - $0.derRepresentation.count) }
        let lengths = signatures.map { $0.derRepresentation.count }
        let spki = publicKey.spkiDER

        var swiftRates: [Double] = [], evpRates: [Double] = []
        var swiftVerified = 0, evpVerified = 0
        for _ in 0..<rounds {
            let swiftTime = Bench.seconds {
                for i in 0..<iterationsPerRound where publicKey.isValidSignature(signatures[i % count], for: messages[i % count]) {
                    swiftVerified += 1
                }
            }
            var evpResult = 0
            let evpTime = Bench.seconds {
                evpResult = ock_bench_evp_verify(spki, spki.count, flatMessages, 64, count, flatSignatures, stride, lengths, iterationsPerRound)
            }
            evpVerified += evpResult
            swiftRates.append(Double(iterationsPerRound) / swiftTime)
            evpRates.append(Double(iterationsPerRound) / evpTime)
        }
        // Both loops must have done the real work, or the ratio means nothing.
        precondition(swiftVerified == rounds * iterationsPerRound && evpVerified == rounds * iterationsPerRound,
                     "benchmark signatures failed to verify")
        let swift = Bench.median(swiftRates), evp = Bench.median(evpRates)
        Bench.emit([
            ("benchmark", "ecdsa_p256_verify"),
            ("swift_per_sec", swift),
            ("evp_per_sec", evp),
            ("ratio", swift / evp),
            ("target_ratio", 0.95),
            ("meets_target", swift / evp >= 0.95),
            ("rounds", rounds),
            ("iterations_per_round", iterationsPerRound),
        ])
    }
}
