// The car-wide handshake budget (protocol.md H1a) sized to the identity's signing time
// (issue 18). Every handshake costs one identity signature, and the signature runs on the agent
// loop: 200 a second with a burst of 100 is 3 % of a core in software, but a discrete TPM that
// signs in 100 ms would spend 10 s of loop time on one burst, with every lock, unlock and
// actuator completion waiting behind it. So with a device identity the budget is cut until
// handshakes use at most a quarter of the loop over time and one second of it per burst. A
// device's signing rate is its hard ceiling anyway; the budget only decides who waits.
#if canImport(Glibc)
import Glibc
#endif
import Protocol

enum VaultSignBudget {
    /// Share of the loop that signing may take in the long run, and loop time per full burst.
    static let loopShare = 0.25
    static let burstMillis = 1000.0
    static let probeRounds = 3
    /// Signed only to time the device; never sent, never stored. Not a protocol transcript
    /// (every protocol signature starts with its own context label, docs/protocol.md).
    static let probeMessage = Bytes("opencarkey key vault timing probe, not a protocol message".utf8)

    /// The budget for an identity that signs in `signMillis`: `standard` when signing is
    /// cheap enough, otherwise fewer tokens a second and a smaller burst (at least 1 each).
    static func carWide(signMillis: Double, standard: HandshakeBudget) -> HandshakeBudget {
        guard signMillis > 0 else { return standard }
        let perSecond = min(Double(standard.perSecond), (loopShare * 1000 / signMillis).rounded(.down))
        let burst = min(Double(standard.burst), (burstMillis / signMillis).rounded(.down))
        return HandshakeBudget(perSecond: Int(perSecond), burst: Int(burst))
    }

    /// The median of `probeRounds` signatures of the probe message, in milliseconds.
    static func measure(_ identity: any ProtocolSigner, nowMicros: () -> UInt64 = monotonicMicros) throws -> Double {
        var samples: [UInt64] = []
        for _ in 0..<probeRounds {
            let start = nowMicros()
            _ = try identity.signature(for: probeMessage)
            samples.append(nowMicros() &- start)
        }
        return Double(samples.sorted()[samples.count / 2]) / 1000
    }

    /// The start-up line: what the device costs and the budget that follows.
    static func startupLine(signMillis: Double, budget: HandshakeBudget, standard: HandshakeBudget) -> String {
        let cost = "identity signature \(formatMillis(signMillis)) ms (median of \(probeRounds))"
        if budget == standard {
            return "carkey-agent: key vault: \(cost): car-wide handshake budget \(budget.perSecond)/s, burst \(budget.burst) (standard)"
        }
        return "carkey-agent: key vault: \(cost): car-wide handshake budget cut to \(budget.perSecond)/s, burst \(budget.burst) "
            + "(standard \(standard.perSecond)/s, burst \(standard.burst)), so handshakes take at most a quarter of the agent loop"
    }

    static func formatMillis(_ millis: Double) -> String {
        let hundredths = Int((millis * 100).rounded())
        let fraction = String(hundredths % 100)
        return "\(hundredths / 100).\(fraction.count == 1 ? "0" + fraction : fraction)"
    }

    static func monotonicMicros() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return UInt64(spec.tv_sec) &* 1_000_000 &+ UInt64(spec.tv_nsec) / 1000
    }
}
