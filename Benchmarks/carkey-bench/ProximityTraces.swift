// Measurement-level UWB channel for the proximity benchmark: a true distance over time,
// turned into what the ranging roles would report each 50 ms round (a range with its STS
// quality, or a failed round), with honest impairments and two attackers. Deterministic: every
// trace comes from a seeded generator, so two runs print the same figures.
#if canImport(Glibc)
import Glibc
#endif
import Protocol

/// SplitMix64: tiny, fast, and good enough for Monte Carlo traces.
struct ProximityBenchRandom {
    private var state: UInt64
    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    mutating func unit() -> Double { Double(next() >> 11) / Double(UInt64(1) << 53) }
    mutating func uniform(_ low: Double, _ high: Double) -> Double { low + (high - low) * unit() }
    mutating func chance(_ probability: Double) -> Bool { unit() < probability }

    mutating func gaussian(sigma: Double) -> Double {
        let u1 = max(unit(), 1e-300), u2 = unit()
        return sigma * (-2 * log(u1)).squareRoot() * cos(2 * Double.pi * u2)
    }
}

/// What one round delivers to the engine.
enum SimulatedRound {
    case range(metres: Double, quality: Double, stsValid: Bool)
    case failure
}

/// Honest radio impairments (dw3000.md sections 2 and 5: about 10 cm; NLOS only adds path).
struct HonestChannel {
    var sigmaMetres = 0.1
    /// A body or door pillar in the way: the first path is lost and a reflection is ranged.
    var nlosProbability = 0.08
    var nlosBiasMetres = (0.3, 3.0)
    var lossProbability = 0.05
    /// Honest STS quality is high; a rare round still falls below the 60 % threshold.
    var qualityRange = (0.7, 1.0)
    var badSTSProbability = 0.005
    static let stsThreshold = 0.6

    func round(trueDistance: Double, random: inout ProximityBenchRandom) -> SimulatedRound {
        if random.chance(lossProbability) { return .failure }
        var measured = trueDistance + random.gaussian(sigma: sigmaMetres)
        if random.chance(nlosProbability) { measured += random.uniform(nlosBiasMetres.0, nlosBiasMetres.1) }
        let quality = random.chance(badSTSProbability) ? random.uniform(0.2, 0.59) : random.uniform(qualityRange.0, qualityRange.1)
        return .range(metres: measured, quality: quality, stsValid: quality >= Self.stsThreshold)
    }

    /// Free-space-ish BLE RSSI at 1 m of -59 dBm, with shadowing.
    func rssi(trueDistance: Double, random: inout ProximityBenchRandom) -> Double {
        -59 - 20 * log10(max(trueDistance, 0.1)) + random.gaussian(sigma: 6)
    }
}

/// An attacker standing by the car while the real phone is far away.
enum ProximityAttack {
    /// Forwards every frame: the channel is honest, only longer by the relay's own path and delay.
    case relay
    /// Ghost peak (arXiv 2111.05313): with `success` probability per round it makes the
    /// responder lock onto an early fake path at `targetMetres`. With STS the forged STS does
    /// not correlate (low quality, invalid round); without STS nothing reveals it.
    case distanceReduction(success: Double, sts: Bool)

    func round(trueDistance: Double, target: Double, relayExtra: Double, channel: HonestChannel,
               random: inout ProximityBenchRandom) -> SimulatedRound {
        switch self {
        case .relay:
            return channel.round(trueDistance: trueDistance + relayExtra, random: &random)
        case .distanceReduction(let success, let sts):
            guard random.chance(success) else { return channel.round(trueDistance: trueDistance, random: &random) }
            let forged = target + random.gaussian(sigma: 0.05)
            if sts {
                let quality = random.uniform(0.0, 0.5)
                return .range(metres: forged, quality: quality, stsValid: false)
            }
            return .range(metres: forged, quality: 1.0, stsValid: true)
        }
    }
}

/// A walk towards the car: from `start` at `speed` down to `final`, then standing still.
struct ApproachPath {
    let start: Double, speed: Double, final: Double

    func distance(atSeconds t: Double) -> Double { max(final, start - speed * t) }

    /// When the true distance crosses `metres` (nil if it never does).
    func crossing(_ metres: Double) -> Double? {
        guard final < metres else { return nil }
        return max(0, (start - metres) / speed)
    }

    var arrivalSeconds: Double { (start - final) / speed }
}

extension RangeMeasurement {
    init(benchRound: UInt32, metres: Double, quality: Double) {
        self.init(round: benchRound, timeOfFlightUnits: metres / UWBTimestamp.metresPerUnit, stsQuality: quality)
    }
}
