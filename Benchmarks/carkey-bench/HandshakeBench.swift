// Car-side handshakes per second: Hello -> Challenge, AuthResponse -> SessionAccepted, one
// unlock Command -> Response, and the link closing, through the real CarProtocolEngine (system
// randomness and ephemeral keys). A phone session drives it in process, but only the car
// engine's calls are timed, so the phone's own crypto is excluded. The reference is the same
// primitive operations as direct EVP calls in C (ock_bench_evp_handshake_crypto), timed in the
// same run, interleaved in rounds so drift hits both.
import CBenchReference
import Protocol

enum HandshakeBench {
    static let targetRatio = 1.2

    static func run(rounds: Int = 15, handshakesPerRound: Int = 200) throws {
        let identity = try P256PrivateKey.generate()
        let phoneKey = try P256PrivateKey.generate()
        // 17 characters, like a VIN: the signed Challenge input is then 208 bytes, as in C.
        let vehicleID = try VehicleID("OCK-BENCH-VIN-001")
        let directory = InMemoryKeyDirectory([KeyRecord(publicKey: phoneKey.publicKey, role: .owner, permissions: .all)])
        var engine = CarProtocolEngine(configuration: CarProtocolConfiguration(vehicleID: vehicleID),
                                       identity: identity, keys: directory)
        let phoneConfiguration = PhoneConfiguration(longTermKey: phoneKey, carIdentityKey: identity.publicKey, vehicleID: vehicleID)
        let reference = try ReferenceInputs(identity: identity, phoneKey: phoneKey)

        var clock = Clock()
        var carRates: [Double] = [], cryptoRates: [Double] = []
        var completed = 0, referenceCompleted = 0
        for _ in 0..<rounds {
            var carNanos: UInt64 = 0
            for _ in 0..<handshakesPerRound {
                var phone = PhoneProtocolSession(configuration: phoneConfiguration)
                if try handshake(&engine, &phone, &clock, carNanos: &carNanos) { completed += 1 }
            }
            carRates.append(Double(handshakesPerRound) / (Double(carNanos) / 1e9))
            var result = 0
            let seconds = Bench.seconds { result = reference.run(iterations: handshakesPerRound) }
            referenceCompleted += result
            cryptoRates.append(Double(handshakesPerRound) / seconds)
        }
        // Both sides must have done the whole job every time, or the ratio means nothing.
        precondition(completed == rounds * handshakesPerRound, "car handshakes failed: \(completed)")
        precondition(referenceCompleted == rounds * handshakesPerRound, "reference handshakes failed: \(referenceCompleted)")
        let car = Bench.median(carRates), crypto = Bench.median(cryptoRates)
        let ratio = crypto / car
        Bench.emit([
            ("benchmark", "car_handshake"),
            ("handshakes_per_sec", car),
            ("crypto_only_per_sec", crypto),
            ("overhead_ratio", ratio),
            ("target", targetRatio),
            ("meets_target", ratio <= targetRatio),
            ("rounds", rounds),
            ("handshakes_per_round", handshakesPerRound),
        ])
    }

    /// One visit; adds the time spent inside the car engine to `carNanos`. True when the phone
    /// got an ok Response.
    private static func handshake(_ engine: inout CarProtocolEngine, _ phone: inout PhoneProtocolSession,
                                  _ clock: inout Clock, carNanos: inout UInt64) throws -> Bool {
        let link = clock.nextLink()
        let now = clock.tick()
        let hello = try phone.start()

        var start = Bench.now()
        let challenge = engine.receive(hello, from: link, now: now)
        carNanos += Bench.now() - start
        guard case .send(let auth) = try phone.receive(sent(challenge), now: now) else { return false }

        start = Bench.now()
        let accepted = engine.receive(auth, from: link, now: now)
        carNanos += Bench.now() - start
        guard case .established = try phone.receive(sent(accepted), now: now) else { return false }
        let command = try phone.command(.unlock, now: now)

        start = Bench.now()
        var actions = engine.receive(command, from: link, now: now)
        // An unlock's perform follows its commandAccepted audit record.
        if let request = actions.lazy.compactMap({ if case .perform(let request) = $0 { request } else { nil } }).first {
            actions = engine.complete(request.token, result: nil, vehicleState: [.trunkLocked], now: now)
        }
        carNanos += Bench.now() - start
        guard case .response(let body) = try phone.receive(sent(actions), now: now), body.isOK else { return false }

        start = Bench.now()
        _ = engine.linkClosed(link, now: now)
        carNanos += Bench.now() - start
        return true
    }

    private static func sent(_ actions: [CarAction]) -> Bytes {
        for action in actions { if case .send(_, let bytes) = action { return bytes } }
        return []
    }

    /// Virtual protocol time (1 ms per visit, trusted) and a fresh link per visit.
    private struct Clock {
        var millis: UInt64 = 1_000_000
        var link: UInt64 = 0
        let wall: Int64 = 1_767_225_600

        mutating func tick() -> ProtocolTime {
            millis += 1
            return ProtocolTime(monotonicMillis: millis, wallSeconds: wall, wallClockTrusted: true)
        }

        mutating func nextLink() -> LinkID {
            link += 1
            return LinkID(link)
        }
    }

    /// Valid inputs for the C loop: phone ephemeral points and signatures by the phone key.
    private struct ReferenceInputs {
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

        func run(iterations: Int) -> Int {
            ock_bench_evp_handshake_crypto(identityPKCS8, identityPKCS8.count, phoneSPKI, phoneSPKI.count,
                                           points, signedData, signatures, stride, lengths, count, iterations)
        }
    }
}
