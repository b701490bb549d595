// `carkey audit verify`: checks a stream of published events against the car's signed
// checkpoints and reports deletions, reordering and alterations by sequence number
// (docs/cloud.md, "Audit chain and checkpoints"). Exit 0 intact, 1 a finding or nothing to
// verify, 2 usage. A stream without events proves nothing (events are not retained: a listener
// that started after they were published hears none), so it is not "intact" unless the caller
// says an empty stream is expected (--allow-empty).
import CommandLineKit
import Drivers
import Protocol

#if canImport(Glibc)
import Glibc
#endif

extension Command {
    static let audit = Command(
        name: "audit",
        summary: "Audit-trail tools for fleet back ends and investigators",
        subcommands: [.auditVerify]
    )

    static let auditVerify = Command(
        name: "verify",
        summary: "Verify published events against signed checkpoints (exit 0 intact, 1 finding, 2 usage)",
        discussion: """
            Reads JSON lines as the car published them on vehicles/{id}/events and
            vehicles/{id}/audit, from --events FILE (and --checkpoints FILE), or live from the
            broker for --seconds (default 30). Prints one line per finding (deleted, reordered,
            altered, forged-checkpoint) with its sequence number, then notes and a summary;
            events after the last valid checkpoint are "not yet covered", which is no error.
            A stream without events is "nothing verified", exit 1, unless --allow-empty: events
            are not retained, so listen before they are published, and ask the car for a
            checkpoint (carkey-agent checkpoint) to cover what it sent.
            """,
        options: [
            .value("car-key", placeholder: "HEX|@PEMFILE", help: "The car's identity public key"),
            .value("events", placeholder: "FILE", help: "JSON lines: events (and checkpoints) as published"),
            .value("checkpoints", placeholder: "FILE", help: "JSON lines: checkpoints from vehicles/{id}/audit"),
        ] + BrokerArguments.options + [
            .value("vehicle", placeholder: "ID", help: "Vehicle ID (required with --mqtt; checkpoints must name it)"),
            .value("seconds", placeholder: "N", help: "How long to listen with --mqtt (default 30)"),
            .flag("allow-empty", help: "Exit 0 for a stream without events (a car that had none to report)"),
            .flag("json", help: "Print the report as one JSON object"),
        ],
        exitStatuses: [
            ExitStatus(0, "intact: every event covered by a valid checkpoint or not yet covered (and at least one event, unless --allow-empty)"),
            ExitStatus(1, "a finding (deleted, reordered, altered, forged-checkpoint), nothing verified (no events), or the broker could not be read"),
        ],
        action: { invocation in
            let arguments = invocation.arguments
            let key = try HexArguments.publicKey(try arguments.require("car-key"), option: "car-key")
            let vehicle = arguments.value("vehicle")
            var verifier = AuditVerifier(carKey: key, vehicle: vehicle)
            switch (arguments.value("events"), arguments.value("mqtt")) {
            case (let path?, nil):
                if let name = ["mqtt-ca", "mqtt-cert", "mqtt-key", "seconds"].first(where: { arguments.value($0) != nil }) {
                    throw UsageError("'--\(name)' needs '--mqtt' (it does nothing with '--events')")
                }
                for line in try AuditInput.lines(path, option: "events") { verifier.add(line) }
            case (nil, let url?):
                guard let vehicle else { throw UsageError("'--mqtt' needs '--vehicle'") }
                let seconds = try AuditInput.seconds(arguments.value("seconds"))
                let options = try BrokerArguments.connectOptions(arguments, url: url, clientID: "carkey-audit-\(getpid())")
                for payload in try AuditInput.listen(options: options, topics: CloudTopics(vehicleID: vehicle), seconds: seconds) {
                    verifier.add(payload)
                }
            default:
                throw UsageError("give exactly one of '--events FILE' or '--mqtt mqtt://HOST:PORT'")
            }
            if let path = arguments.value("checkpoints") {
                for line in try AuditInput.lines(path, option: "checkpoints") { verifier.add(line) }
            }
            let report = verifier.verify()
            let empty = report.eventsRead == 0 && !arguments.flag("allow-empty")
            print(arguments.flag("json") ? AuditReportText.json(report, empty: empty) : AuditReportText.lines(report, empty: empty))
            if empty {
                writeStderr("carkey: nothing verified: no events in the stream. Events are not retained: listen before the car "
                            + "publishes them; --allow-empty accepts an empty stream\n")
            }
            return report.intact && !empty ? 0 : 1
        }
    )
}

/// Where the verifier's messages come from.
enum AuditInput {
    /// Files up to this size are read whole (a year of events of a busy car is far below it).
    static let maximumFileBytes = 512 << 20

    static func lines(_ path: String, option: String) throws -> [Bytes] {
        let bytes: Bytes
        do {
            bytes = try Files.read(path, limit: maximumFileBytes)
        } catch {
            throw UsageError("cannot read '\(path)' for '--\(option)': \(error)")
        }
        return bytes.split(separator: 10).map { Bytes($0) }.filter { !$0.allSatisfy { $0 == 32 || $0 == 13 || $0 == 9 } }
    }

    static func seconds(_ text: String?) throws -> Int {
        guard let text else { return 30 }
        guard let value = Int(text), (1...86_400).contains(value) else {
            throw UsageError.invalidValue(text, for: "--seconds", expected: "1 to 86400")
        }
        return value
    }

    /// Subscribes to the events and audit topics and collects what arrives for `seconds`. A
    /// broker that refuses the TCP connection is tried again every 200 ms within that time: a
    /// listener started together with its broker (the README does) must not lose the race.
    static func listen(options: MQTTConnectOptions, topics: CloudTopics, seconds: Int) throws -> [Bytes] {
        let transport = try MosquittoTransport(options: options)
        defer { transport.disconnect() }
        let deadline = monotonicSeconds() + Double(seconds)
        while true {
            do {
                try transport.connect()
                break
            } catch {
                guard monotonicSeconds() + 0.2 < deadline else { throw ToolFailure("cannot reach the broker: \(error)") }
                SystemClock().sleep(millis: 200)
            }
        }
        var payloads = [Bytes]()
        var subscribed = false
        while monotonicSeconds() < deadline {
            let pass = transport.service(timeoutMillis: 100)
            if let error = pass.error, !subscribed { throw ToolFailure("cannot reach the broker: \(error)") }
            for event in pass.events {
                switch event {
                case .connected:
                    try transport.subscribe(topics.events, qos: .atLeastOnce)
                    try transport.subscribe(topics.audit, qos: .atLeastOnce)
                    subscribed = true
                case .connectRefused(let code):
                    throw ToolFailure("the broker refused the connection (reason \(code))")
                case .message(let message):
                    payloads.append(message.payload)
                default:
                    break
                }
            }
        }
        guard subscribed else { throw ToolFailure("no connection to the broker within \(seconds) s") }
        return payloads
    }
}

private func monotonicSeconds() -> Double {
    var spec = timespec()
    clock_gettime(CLOCK_MONOTONIC, &spec)
    return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
}

/// The report as text lines or one JSON object.
enum AuditReportText {
    /// `empty`: no events and no --allow-empty; the summary says "nothing verified".
    static func lines(_ report: AuditReport, empty: Bool = false) -> String {
        var out = report.findings.map(\.line)
        out += report.notes.map { "note: " + $0 }
        if let range = report.notYetCovered {
            out.append("not yet covered: seq \(range.lowerBound)-\(range.upperBound) (after the last valid checkpoint)")
        }
        let verdict = !report.intact ? "\(report.findings.count) finding(s)" : empty ? "nothing verified" : "intact"
        out.append("\(verdict): \(report.eventsRead) event(s), \(report.validCheckpoints) of \(report.checkpointsRead) checkpoint(s) valid"
                   + (report.coveredThrough.map { ", covered through seq \($0)" } ?? ""))
        return out.joined(separator: "\n")
    }

    static func json(_ report: AuditReport, empty: Bool = false) -> String {
        JSONValue.object([
            ("intact", .bool(report.intact && !empty)),
            ("empty", .bool(report.eventsRead == 0)),
            ("findings", .array(report.findings.map { finding in
                .object([("kind", .string(finding.kind.rawValue)), ("seq", .integer(finding.seq)),
                         ("otherSeq", finding.otherSeq.map { .integer($0) } ?? .null), ("message", .string(finding.message))])
            })),
            ("notes", .array(report.notes.map { .string($0) })),
            ("events", .integer(Int64(report.eventsRead))),
            ("checkpoints", .integer(Int64(report.checkpointsRead))),
            ("validCheckpoints", .integer(Int64(report.validCheckpoints))),
            ("coveredThrough", report.coveredThrough.map { .integer($0) } ?? .null),
            ("notYetCovered", report.notYetCovered.map { .object([("from", .integer($0.lowerBound)), ("to", .integer($0.upperBound))]) } ?? .null),
        ]).serialized
    }
}
