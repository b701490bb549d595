// Car-side handshake cost: Hello -> Challenge, AuthResponse -> SessionAccepted, one unlock
// Command -> Response, and the link closing, through the real CarProtocolEngine (system
// randomness and ephemeral keys). A phone session drives it in process, but only the car
// engine's calls are timed, so the phone's own crypto is excluded. The reference is the same
// primitive operations as direct EVP calls in C (RawHandshakeCost.swift), in the same run,
// interleaved in rounds so drift hits both. Both sides are timed with this thread's CPU clock
// (the four clock-read pairs per handshake are calibrated and subtracted).
import Protocol

enum HandshakeBench {
    static let targetRatio = 1.2

    static func run(rounds: Int = 15, handshakesPerRound: Int = 200) throws {
        let identity = try P256PrivateKey.generate()
        let phoneKey = try P256PrivateKey.generate()
        // 17 characters, like a VIN: the signed Challenge input is then 208 bytes, as in C.
        let vehicleID = try VehicleID("OCK-BENCH-VIN-001")
        let directory = Keychain(records: [KeyRecord(publicKey: phoneKey.publicKey, role: .owner, permissions: .all)])
        var engine = CarProtocolEngine(configuration: CarProtocolConfiguration(vehicleID: vehicleID),
                                       identity: identity, keys: directory)
        let phoneConfiguration = PhoneConfiguration(longTermKey: phoneKey, carIdentityKey: identity.publicKey, vehicleID: vehicleID)
        let reference = try HandshakeReferenceInputs(identity: identity, phoneKey: phoneKey)
        let clockOverhead = Bench.threadCPUClockOverheadNanos()

        var clock = Clock()
        // CPU microseconds per handshake, and the per-round overhead ratio car/crypto.
        var carMicros = RoundFigures(), cryptoMicros = RoundFigures(), ratios = RoundFigures()
        var completed = 0
        for _ in 0..<rounds {
            var carNanos: UInt64 = 0
            for _ in 0..<handshakesPerRound {
                var phone = PhoneProtocolSession(configuration: phoneConfiguration)
                if try handshake(&engine, &phone, &clock, carNanos: &carNanos) { completed += 1 }
            }
            let timed = Double(carNanos) - Double(4 * handshakesPerRound) * Double(clockOverhead)
            let car = timed / 1000 / Double(handshakesPerRound)
            let crypto = reference.cpuMicrosPerHandshake(iterations: handshakesPerRound)
            carMicros.append(car)
            cryptoMicros.append(crypto)
            ratios.append(car / crypto)
        }
        // The car side must have done the whole job every time, or the ratio means nothing
        // (the reference checks its own).
        precondition(completed == rounds * handshakesPerRound, "car handshakes failed: \(completed)")
        Bench.emit([
            ("benchmark", "car_handshake"),
            ("path", "CarProtocolEngine in process (car side only) vs the same EVP operations in C"),
            ("clock", "thread_cpu"),
            ("handshakes_per_sec", 1e6 / carMicros.median),
            ("crypto_only_per_sec", 1e6 / cryptoMicros.median),
            ("car_cpu_us_min", carMicros.min),
            ("car_cpu_us_median", carMicros.median),
            ("crypto_cpu_us_min", cryptoMicros.min),
            ("crypto_cpu_us_median", cryptoMicros.median),
            // Car CPU / crypto CPU: the median round, the best round, and the two best rounds.
            ("overhead_ratio", ratios.median),
            ("overhead_ratio_min", ratios.min),
            ("overhead_ratio_of_min_times", carMicros.min / cryptoMicros.min),
            ("clock_overhead_ns", Int(clockOverhead)),
            ("target", targetRatio),
            ("meets_target", ratios.median <= targetRatio),
            ("rounds", rounds),
            ("handshakes_per_round", handshakesPerRound),
        ])
    }

    /// One visit; adds the thread CPU time spent inside the car engine to `carNanos`. True when the phone
    /// got an ok Response.
    private static func handshake(_ engine: inout CarProtocolEngine, _ phone: inout PhoneProtocolSession,
                                  _ clock: inout Clock, carNanos: inout UInt64) throws -> Bool {
        let link = clock.nextLink()
        let now = clock.tick()
        let hello = try phone.start()

        var start = Bench.threadCPUNow()
        let challenge = engine.receive(hello, from: link, now: now)
        carNanos += Bench.threadCPUNow() - start
        guard case .send(let auth) = try phone.receive(sent(challenge), now: now) else { return false }

        start = Bench.threadCPUNow()
        let accepted = engine.receive(auth, from: link, now: now)
        carNanos += Bench.threadCPUNow() - start
        guard case .established = try phone.receive(sent(accepted), now: now) else { return false }
        let command = try phone.command(.unlock, now: now)

        start = Bench.threadCPUNow()
        var actions = engine.receive(command, from: link, now: now)
        // An unlock's perform follows its commandAccepted audit record.
        if let request = actions.lazy.compactMap({ if case .perform(let request) = $0 { request } else { nil } }).first {
            actions = engine.complete(request.token, result: nil, vehicleState: [.trunkLocked], now: now)
        }
        carNanos += Bench.threadCPUNow() - start
        guard case .response(let body) = try phone.receive(sent(actions), now: now), body.isOK else { return false }

        start = Bench.threadCPUNow()
        _ = engine.linkClosed(link, now: now)
        carNanos += Bench.threadCPUNow() - start
        return true
    }

    private static func sent(_ actions: [CarAction]) -> Bytes {
        for action in actions { if case .send(_, let bytes) = action { return bytes } }
        return []
    }

    /// Virtual protocol time (trusted) and a fresh link per visit. A visit advances 10 ms: the
    /// car-wide handshake budget (protocol.md rule H1a, 200/s, burst 100) refills 0.2 tokens per
    /// virtual millisecond, so at 1 ms a visit the 701st handshake was answered `busy` and the
    /// benchmark stopped. What it measures is the work per handshake, not the rate limiter.
    private struct Clock {
        var millis: UInt64 = 1_000_000
        var link: UInt64 = 0
        let wall: Int64 = 1_767_225_600

        mutating func tick() -> ProtocolTime {
            millis += 10
            return ProtocolTime(monotonicMillis: millis, wallSeconds: wall, wallClockTrusted: true)
        }

        mutating func nextLink() -> LinkID {
            link += 1
            return LinkID(link)
        }
    }
}
