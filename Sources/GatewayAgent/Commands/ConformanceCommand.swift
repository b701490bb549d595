// `carkey-agent conformance --state-dir DIR [--json]`: the conformance report of the agent
// running with --conformance: each of the last phone links' checklists and findings, from
// DIR/control.sock.
import CommandLineKit
import Drivers

extension Command {
    static let conformance = Command(
        name: "conformance",
        summary: "Print the last phone links' conformance checklists (agent run with --conformance)",
        discussion: """
            Connects to DIR/control.sock of the agent running with --state-dir DIR and
            --conformance, and prints, for each open link and the last links that ended, a
            summary line (key, transport, duration, how it ended, deviations and refusals,
            handshake timings), one 'check RULE ok|FAIL|refused PASSED of TOTAL' line per
            rule of docs/protocol.md the phone's messages exercised, the phone rules it never
            exercised, and its findings: 'deviation' (the phone broke the rule) or 'refusal'
            (the car refused the key, or could not serve). Rules are listed in
            docs/phone-app.md. With --json: one object {"links":[{"summary":{...},
            "checks":[...],"findings":[...]}]}. Exit 1 when no agent runs or it runs without
            --conformance.
            """,
        options: [
            StateDirectoryArgument.option,
            .flag("json", help: "Print one JSON document"),
        ],
        action: { invocation in
            let directory = try StateDirectoryArgument.path(invocation.arguments)
            let json = invocation.arguments.flag("json")
            let response: ControlResponse
            do {
                response = try ControlClient.request(json ? "conformance json" : "conformance",
                                                     socketPath: directory + "/" + ControlProtocol.socketFileName)
            } catch let error as ControlClientError {
                throw AgentToolFailure("\(error)")
            }
            if let reason = response.error { throw AgentToolFailure("no conformance report: \(reason)") }
            guard json else {
                response.lines.forEach { print($0) }
                return 0
            }
            guard let document = ConformanceJSON.document(response.lines) else {
                throw AgentToolFailure("the agent sent an unexpected answer")
            }
            print(document.serialized)
            return 0
        }
    )
}

/// The agent's JSON lines ("link", then its "check"s and "finding"s) as one document.
enum ConformanceJSON {
    static func document(_ lines: [String]) -> JSONValue? {
        var links: [(summary: String, checks: [JSONValue], findings: [JSONValue])] = []
        for line in lines {
            guard case .object(let fields)? = try? JSONTree.parse(Array(line.utf8)),
                  let type = fields["type"]?.stringValue else { return nil }
            switch type {
            case "link": links.append((line, [], []))
            case "check" where !links.isEmpty: links[links.count - 1].checks.append(.raw(line))
            case "finding" where !links.isEmpty: links[links.count - 1].findings.append(.raw(line))
            default: return nil
            }
        }
        return .object([("links", .array(links.map { link in
            .object([("summary", .raw(link.summary)), ("checks", .array(link.checks)), ("findings", .array(link.findings))])
        }))])
    }
}
