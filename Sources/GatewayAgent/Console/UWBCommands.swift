// uwb: the UWB module and what it measures: chip, configuration and counters, each ranging
// link with its key, rounds and zone, and the last outcomes (distance, STS quality, failures).
import Drivers
import Protocol

final class UWBCommands: ConsoleCommandGroup {
    private let uwb: UWBService
    private let clock: AgentClock

    init(uwb: UWBService, clock: AgentClock) {
        self.uwb = uwb
        self.clock = clock
    }

    let help: [(usage: String, summary: String)] = [("uwb", "UWB module, ranging links, zones, last ranges and counters")]
    let verbs: Set<String> = ["uwb"]

    func run(_ words: [String]) -> [String] {
        guard words.count == 1 else { return ConsoleText.usage("uwb") }
        let now = clock.monotonicMillis
        var lines = ["uwb: \(uwb.radio.summary)"]
        if let snapshot = uwb.radio.snapshot { lines += snapshot.description.split(separator: "\n").map { "  " + $0 } }
        let failures = uwb.failuresByReason.sorted { $0.key.rawValue < $1.key.rawValue }.map { "\($0.key.rawValue) \($0.value)" }
        lines.append("rounds without a range: " + (failures.isEmpty ? "none" : failures.joined(separator: ", ")))
        let sessions = uwb.sessions.values.sorted { $0.grant.link.rawValue < $1.grant.link.rawValue }
        lines.append("ranging links: \(sessions.count)")
        for session in sessions {
            let estimate = uwb.engine.estimate(key: session.grant.keyID, atMillis: now)
            lines.append("  \(session.grant.link) key \(session.grant.keyID): every \(session.grant.setup.roundIntervalMillis) ms, "
                         + "\(session.rounds) rounds, \(session.failures) failed, \(session.skippedForRSSI) skipped (weak RSSI), "
                         + "zone \(estimate.filteredZone)"
                         + (estimate.filteredDistanceMetres.map { ", \(Self.metres($0))" } ?? "")
                         + ", \(estimate.consecutiveValidRounds) valid in a row")
        }
        if !uwb.recent.isEmpty { lines.append("last rounds:") }
        for entry in uwb.recent.suffix(8) {
            let age = now >= entry.atMillis ? now - entry.atMillis : 0
            lines.append("  \(entry.link) \(age) ms ago: " + Self.describe(entry.outcome))
        }
        return lines
    }

    /// The `status` line: the radio, then the nearest key's zone and distance.
    static func proximityLine(_ uwb: UWBService, nowMillis: UInt64) -> String {
        let radio = uwb.radio.isAvailable ? "UWB up" : "UWB NOT ANSWERING (unlock refused)"
        guard let nearest = uwb.nearest(nowMillis: nowMillis) else { return "\(radio), no key ranging" }
        return "\(radio), nearest key \(nearest.key): zone \(nearest.estimate.filteredZone)"
            + (nearest.estimate.filteredDistanceMetres.map { ", \(metres($0))" } ?? "")
    }

    static func describe(_ outcome: RangingOutcome) -> String {
        switch outcome {
        case .range(let range):
            return "round \(range.round) \(metres(range.distanceMetres)), STS quality \(Int((range.stsQuality * 100).rounded())) %"
        case .failed(let reason): return "no range (\(reason.rawValue))"
        case .completed: return "completed"
        }
    }

    static func metres(_ value: Double) -> String {
        guard value.isFinite else { return "? m" }
        let centimetres = Int((value * 100).rounded())
        let sign = centimetres < 0 ? "-" : ""
        let magnitude = abs(centimetres)
        return "\(sign)\(magnitude / 100).\(magnitude % 100 < 10 ? "0" : "")\(magnitude % 100) m"
    }
}
