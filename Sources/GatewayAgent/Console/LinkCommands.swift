// links: the phones connected now, as the radio sees them: transport, address, RSSI (the
// proximity work reads the same figure), ATT MTU, age and whether a session is established.
// Addresses are the phones' (often private, rotating) addresses; no key material is shown.
// conformance: how those phones (and the last ones that left) kept to docs/protocol.md.
import Drivers
import Protocol

final class LinkCommands: ConsoleCommandGroup {
    private let context: ConsoleContext

    init(context: ConsoleContext) {
        self.context = context
    }

    let help: [(usage: String, summary: String)] = [
        ("links", "connected phones: address, RSSI, MTU, age, session"),
        ("conformance [json]", "the last phone links' checklists against docs/protocol.md (run --conformance)"),
    ]
    let verbs: Set<String> = ["links", "conformance"]

    func run(_ words: [String]) -> [String] {
        if words.first == "conformance" {
            guard words.count == 1 || (words.count == 2 && words[1] == "json") else { return ConsoleText.usage("conformance [json]") }
            guard let report = context.conformanceLines else { return ["conformance: not available"] }
            return report(Array(words.dropFirst()))
        }
        guard words.count == 1 else { return ConsoleText.usage("links") }
        guard let snapshot = context.linkSnapshot?() else { return ["links: not available"] }
        let header = "phone link: \(snapshot.endpoint), \(snapshot.links.count) of \(snapshot.maxLinks) link(s) open"
        return [header] + snapshot.links.map { Self.line($0, nowMillis: context.clock.monotonicMillis) }
    }

    static func line(_ link: LinkSnapshot.Entry, nowMillis: UInt64) -> String {
        let facts = link.facts
        var parts = ["  \(link.id)", facts.transport]
        if let address = facts.peerAddress { parts.append(address) }
        parts.append("rssi " + (facts.rssi.map { "\($0) dBm" } ?? "unknown"))
        if let mtu = facts.mtu { parts.append("mtu \(mtu)") }
        parts.append("up \((nowMillis &- facts.connectedAtMillis) / 1000) s")
        parts.append(link.established ? "session" : "handshake")
        return parts.joined(separator: ", ")
    }
}

/// The open links at one moment (console, status).
struct LinkSnapshot {
    struct Entry {
        let id: LinkID
        let facts: LinkFacts
        let established: Bool
    }
    let endpoint: String
    let maxLinks: Int
    let links: [Entry]
}
