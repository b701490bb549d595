// `run --conformance`: the agent's side of conformance mode. CarService hands it every phone
// message with the engine's answer, the engine's other actions and every link's end; it
// writes one stderr line per finding, the checklist when a link ends, and answers the
// `conformance` command (console, control socket, `carkey-agent conformance`).
//
// Observation only: the engine has decided before the monitor sees anything, and nothing the
// monitor does reaches the engine or the phone. Lines carry IDs, counters, times and fault
// names, never key material or message bytes, like every other log line.
import Drivers
import Protocol

final class ConformanceMonitor {
    /// Control-socket lines are bounded (ControlProtocol.maxLineBytes); the report's text is
    /// cut to fit there, never in the log.
    static let maxAnswerLineBytes = ControlProtocol.maxLineBytes - 1

    private var observer: ConformanceObserver
    private let log: AgentLog

    init(configuration: CarProtocolConfiguration, handshakeDeadlineMillis: UInt64, log: AgentLog) {
        observer = ConformanceObserver(configuration: configuration, handshakeDeadlineMillis: handshakeDeadlineMillis)
        self.log = log
    }

    static let startupLine = "conformance mode: each phone's deviations from docs/protocol.md are reported "
        + "(stderr, console and `carkey-agent conformance`); the car refuses exactly as without it"

    func opened(_ link: LinkID, transport: String, now: ProtocolTime) {
        observer.linkOpened(link, transport: transport, now: now)
    }

    func message(_ bytes: Bytes, on link: LinkID, now: ProtocolTime, answer: [CarAction]) {
        report(observer.message(bytes, on: link, now: now, answer: answer))
    }

    func carActions(_ actions: [CarAction], now: ProtocolTime) {
        guard !actions.isEmpty else { return }
        report(observer.carActions(actions, now: now))
    }

    func ended(_ link: LinkID, _ end: ConformanceLinkEnd, now: ProtocolTime) {
        guard let (findings, report) = observer.linkEnded(link, end, now: now) else { return }
        self.report(findings)
        for line in report.checklistLines(nowMillis: now.monotonicMillis) { log.always("conformance: " + line) }
    }

    /// Why a transport ended a link, in the report's terms.
    static func end(_ reason: LinkCloseReason) -> ConformanceLinkEnd {
        switch reason {
        case .peerClosed: return .phoneClosed
        case .linkLost: return .lost
        case .idleTimeout(let millis): return .idle(millis: millis)
        case .malformedFrame(let why): return .framing(why)
        case .outputOverflow: return .stoppedReading
        case .adapterDown: return .transportError("adapter down")
        case .ioError(let why): return .transportError(why)
        }
    }

    private func report(_ findings: [ConformanceFinding]) {
        for finding in findings { log.always("conformance: " + finding.line) }
    }

    // MARK: The `conformance` command

    /// The checklists of the open links and the last ones that ended, with their findings.
    func textLines(nowMillis: UInt64) -> [String] {
        let reports = observer.reports
        guard !reports.isEmpty else { return ["conformance: no phone has connected yet"] }
        var lines: [String] = []
        for report in reports {
            lines += report.checklistLines(nowMillis: nowMillis)
            lines += report.findings.map(\.line)
            if report.omittedFindings > 0 { lines.append("\(report.link) \(report.omittedFindings) more finding(s) not kept") }
        }
        return lines.map { Self.fit($0) }
    }

    /// The same as JSON lines, each one object: a "link", then its "check"s and "finding"s.
    /// `carkey-agent conformance --json` joins them into one document.
    func jsonLines(nowMillis: UInt64) -> [String] {
        var lines: [String] = []
        for report in observer.reports {
            let link = JSONValue.integer(Int64(clamping: report.link.rawValue))
            let timings = report.timings
            func millis(_ value: UInt64?) -> JSONValue { value.map { .integer(Int64(clamping: $0)) } ?? .null }
            lines.append(Self.fitJSON(report.end.map { $0.description } ?? "") { ended in
                .object([
                    ("type", .string("link")), ("link", link), ("transport", .string(report.transport)),
                    ("key", report.keyID.map { .string($0.description) } ?? .null), ("open", .bool(report.isOpen)),
                    ("ended", report.isOpen ? .null : .string(ended)),
                    ("ms", .integer(Int64(clamping: (report.endedAtMillis ?? nowMillis) &- report.openedAtMillis))),
                    ("deviations", .integer(Int64(report.deviations))), ("refusals", .integer(Int64(report.refusals))),
                    ("omitted", .integer(Int64(report.omittedFindings))),
                    ("hello", millis(timings.hello)), ("challenge", millis(timings.challenge)),
                    ("authResponse", millis(timings.authResponse)), ("session", millis(timings.session)),
                    ("commands", .integer(Int64(timings.commands))),
                ])
            })
            for check in report.checks {
                lines.append(JSONValue.object([
                    ("type", .string("check")), ("link", link), ("rule", .string(check.rule.id)),
                    ("status", .string(check.status)), ("passed", .integer(Int64(check.passed))),
                    ("failed", .integer(Int64(check.failed))),
                ]).serialized)
            }
            for finding in report.findings {
                lines.append(Self.fitJSON(finding.detail) { detail in
                    .object([
                        ("type", .string("finding")), ("link", link), ("ms", .integer(Int64(clamping: finding.atMillis))),
                        ("rule", .string(finding.rule.id)), ("kind", .string(finding.isDeviation ? "deviation" : "refusal")),
                        ("fault", finding.fault.map { .string($0.name) } ?? .null), ("detail", .string(detail)),
                    ])
                })
            }
        }
        return lines
    }

    /// `text` cut (with "...") so the line fits a control-socket line.
    static func fit(_ text: String) -> String {
        guard text.utf8.count > maxAnswerLineBytes else { return text }
        var cut = String(text.prefix(maxAnswerLineBytes - 3))
        while cut.utf8.count > maxAnswerLineBytes - 3 { cut.removeLast() }
        return cut + "..."
    }

    /// The object `make` builds around `text`, with `text` shortened until the line fits.
    static func fitJSON(_ text: String, _ make: (String) -> JSONValue) -> String {
        var keep = text.count
        while true {
            let field = keep >= text.count ? text : String(text.prefix(keep)) + "..."
            let line = make(field).serialized
            if line.utf8.count <= maxAnswerLineBytes || keep == 0 { return line }
            keep = max(0, keep - max(1, line.utf8.count - maxAnswerLineBytes))
        }
    }
}
