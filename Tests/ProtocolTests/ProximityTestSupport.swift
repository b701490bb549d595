// Helpers for the proximity tests: keys, ranges in metres, deterministic noise.
#if canImport(Glibc)
import Glibc
#endif
@testable import Protocol

enum ProximityFixtures {
    static func key(_ n: UInt8) -> KeyID { try! KeyID(bytes: Bytes(repeating: n, count: KeyID.length)) }

    static func range(_ metres: Double, quality: Double = 0.9, round: UInt32 = 0) -> RangeMeasurement {
        RangeMeasurement(round: round, timeOfFlightUnits: metres / UWBTimestamp.metresPerUnit, stsQuality: quality)
    }
}

/// SplitMix64 with Box-Muller: the same numbers on every run and every machine.
struct ProximityTestRandom {
    private var state: UInt64
    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    mutating func unit() -> Double { Double(next() >> 11) / Double(1 << 53) }

    mutating func gaussian(sigma: Double) -> Double {
        let u1 = max(unit(), 1e-300), u2 = unit()
        return sigma * (-2 * log(u1)).squareRoot() * cos(2 * Double.pi * u2)
    }
}

/// Feeds one key's ranges into an engine at 20 Hz (50 ms apart) from `start`.
struct ProximityRig {
    var engine: ProximityEngine
    var now: UInt64 = 10_000
    let key = ProximityFixtures.key(1)

    init(configuration: ProximityConfiguration = ProximityConfiguration()) {
        engine = ProximityEngine(configuration: configuration)
    }

    mutating func range(_ metres: Double, valid: Bool = true, quality: Double = 0.9, key: KeyID? = nil,
                        stepMillis: UInt64 = 50) {
        now += stepMillis
        engine.observe(ProximityFixtures.range(metres, quality: quality), stsValid: valid, key: key ?? self.key,
                       atMillis: now)
    }

    mutating func failure(stepMillis: UInt64 = 50) {
        now += stepMillis
        engine.observeFailure(key: key, atMillis: now)
    }

    mutating func loss(stepMillis: UInt64 = 50) {
        now += stepMillis
        engine.observeLoss(key: key, atMillis: now)
    }

    /// `count` valid rounds at `metres`.
    mutating func hold(_ metres: Double, rounds count: Int, key: KeyID? = nil) {
        for _ in 0..<count { range(metres, key: key) }
    }

    var estimate: ProximityEstimate { engine.estimate(key: key, atMillis: now) }

    func authorize(_ command: CommandCode = .unlock) -> ProximityAuthorization {
        engine.authorize(command: command, key: key, atMillis: now)
    }

    func refusal(_ command: CommandCode = .unlock) -> NotInProximityReason? {
        if case .refuse(reason: .notInProximity(let why)) = authorize(command).verdict { return why }
        return nil
    }
}
