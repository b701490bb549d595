// What a conformance report says about one link: each finding with the rule it concerns, the
// checklist of rules the phone's messages exercised, and how the link ended. Values only: no
// message bytes, keys or plaintext, so a report can be logged and shown like any audit line.

/// One thing worth telling an app team, as it happened.
public struct ConformanceFinding: Sendable, Equatable {
    public let link: LinkID
    /// Milliseconds since the link opened.
    public let atMillis: UInt64
    public let rule: ConformanceRule
    /// The car's answer, when it refused (a cleartext Fault or a Response's result).
    public let fault: FaultCode?
    /// What was observed, with the numbers that matter (counters, milliseconds).
    public let detail: String

    /// A deviation is the phone's doing; otherwise the car refused the key or could not serve.
    public var isDeviation: Bool { rule.kind == .phone }

    public var line: String {
        let what = isDeviation ? "deviation" : "refusal"
        let answer = fault.map { "car answered \($0.name)" } ?? "the car allowed it"
        return "\(link) \(what) \(rule.id) (\(rule.reference)) +\(atMillis) ms: \(detail) [\(answer)]"
    }
}

/// How often one rule was exercised on a link and how it went.
public struct ConformanceCheck: Sendable, Equatable {
    public let rule: ConformanceRule
    public var passed = 0
    /// Failures that are deviations (phone rules) or refusals (key and car rules).
    public var failed = 0

    public var status: String {
        if failed == 0 { return "ok" }
        return rule.kind == .phone ? "FAIL" : "refused"
    }

    public func line(link: LinkID) -> String {
        "\(link) check \(rule.id) \(status) \(passed) of \(passed + failed): \(rule.title)"
    }
}

/// Why a link ended, as the agent saw it.
public enum ConformanceLinkEnd: Sendable, Equatable, CustomStringConvertible {
    case phoneClosed
    case lost
    case idle(millis: UInt64)
    /// A frame (simulated link) or fragment (Bluetooth LE) broke the framing of section 16.
    case framing(String)
    /// More output waited for the phone than the transport holds: it stopped reading.
    case stoppedReading
    /// No session or enrollment within the handshake deadline.
    case handshakeDeadline(millis: UInt64)
    /// The car closed it (a session ended, the rate limiter tripped, a refused newcomer).
    case closedByCar
    /// Its slot went to a newcomer: it had no session.
    case reclaimed
    case agentStopped
    case transportError(String)

    public var description: String {
        switch self {
        case .phoneClosed: return "the phone closed it"
        case .lost: return "the radio link was lost"
        case .idle(let millis): return "nothing from the phone for \(millis) ms"
        case .framing(let why): return "framing error: \(why)"
        case .stoppedReading: return "the phone stopped reading"
        case .handshakeDeadline(let millis): return "no session within \(millis) ms"
        case .closedByCar: return "closed by the car"
        case .reclaimed: return "its slot went to a newcomer"
        case .agentStopped: return "the agent stopped"
        case .transportError(let why): return "transport error: \(why)"
        }
    }
}

/// When the handshake steps happened, in milliseconds since the link opened.
public struct ConformanceTimings: Sendable, Equatable {
    public var hello: UInt64?
    public var challenge: UInt64?
    public var authResponse: UInt64?
    public var session: UInt64?
    public var commands = 0

    public var line: String {
        let steps = [("hello", hello), ("challenge", challenge), ("authResponse", authResponse), ("session", session)]
        let parts = steps.compactMap { name, value in value.map { "\(name) +\($0) ms" } }
        return (parts.isEmpty ? "no handshake" : parts.joined(separator: ", ")) + ", \(commands) command(s)"
    }
}

public struct ConformanceLinkReport: Sendable, Equatable {
    public let link: LinkID
    /// "unix", "ble" or "memory".
    public let transport: String
    public let openedAtMillis: UInt64
    public internal(set) var keyID: KeyID?
    public internal(set) var endedAtMillis: UInt64?
    public internal(set) var end: ConformanceLinkEnd?
    /// The first findings, in order; `omittedFindings` more were counted but not kept.
    public internal(set) var findings: [ConformanceFinding] = []
    public internal(set) var omittedFindings = 0
    public internal(set) var deviations = 0
    public internal(set) var refusals = 0
    public internal(set) var timings = ConformanceTimings()
    var checksByRule: [ConformanceRule: ConformanceCheck] = [:]

    init(link: LinkID, transport: String, openedAtMillis: UInt64) {
        self.link = link
        self.transport = transport
        self.openedAtMillis = openedAtMillis
    }

    /// The rules this link exercised, in checklist order.
    public var checks: [ConformanceCheck] { checksByRule.values.sorted { $0.rule < $1.rule } }

    /// No deviation: the phone followed every rule it exercised (refusals may remain).
    public var isClean: Bool { deviations == 0 }

    public var isOpen: Bool { end == nil }

    /// The first line of the checklist.
    public func summaryLine(nowMillis: UInt64) -> String {
        let age = (endedAtMillis ?? nowMillis) &- openedAtMillis
        var line = "\(link) summary: key \(keyID?.description ?? "-"), \(transport), \(age) ms, "
        line += end.map { "ended: \($0)" } ?? "open"
        line += "; \(deviations) deviation(s), \(refusals) refusal(s)"
        if omittedFindings > 0 { line += " (\(omittedFindings) not itemised)" }
        line += "; \(timings.line)"
        return line
    }

    /// The checklist: the summary, one line per rule exercised, and the rules not exercised.
    public func checklistLines(nowMillis: UInt64) -> [String] {
        let exercised = checks
        let untouched = ConformanceRule.allCases.filter { checksByRule[$0] == nil && $0.kind == .phone }
        var lines = [summaryLine(nowMillis: nowMillis)] + exercised.map { $0.line(link: link) }
        if !untouched.isEmpty {
            lines.append("\(link) not exercised: " + untouched.map(\.id).joined(separator: " "))
        }
        return lines
    }

    mutating func count(_ rule: ConformanceRule, passed: Bool) {
        var check = checksByRule[rule] ?? ConformanceCheck(rule: rule)
        if passed { check.passed += 1 } else { check.failed += 1 }
        checksByRule[rule] = check
    }

    /// Counts `finding`; true when it was kept (the first `keep` of the link).
    @discardableResult
    mutating func add(_ finding: ConformanceFinding, keep: Int) -> Bool {
        count(finding.rule, passed: false)
        if finding.isDeviation { deviations += 1 } else { refusals += 1 }
        guard findings.count < keep else {
            omittedFindings += 1
            return false
        }
        findings.append(finding)
        return true
    }
}
