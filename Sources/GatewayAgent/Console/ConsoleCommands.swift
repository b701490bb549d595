// The console's command set: splits a line into words, routes it to the group that owns the
// first word, and turns anything else into one error line. Lines arrive bounded (LineAssembler,
// AgentConsole.maxLineBytes) with control bytes removed; words are bounded again here so no
// group sees more than it expects.
import Drivers
import Protocol

final class ConsoleCommands: @unchecked Sendable {
    // @unchecked Sendable: LineConsole wants a @Sendable handler, but this object is used only
    // on the agent's loop thread (AgentConsole polls the console from there), like its groups.

    static let maxWords = 8
    static let maxWordBytes = 64
    /// A word of hex digits may be longer: a signed service answer (`service auth ANSWER`).
    static let maxHexWordBytes = 2 * ServiceAuthorisation.maxLength

    private let groups: [any ConsoleCommandGroup]

    init(groups: [any ConsoleCommandGroup]) {
        self.groups = groups
    }

    func answer(_ line: String) -> [String] {
        let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
        guard let verb = words.first else { return [] }
        guard words.count <= Self.maxWords, words.allSatisfy(Self.isBounded) else {
            return ["error: malformed input (at most \(Self.maxWords) words of \(Self.maxWordBytes) bytes)"]
        }
        if verb == "help" || verb == "?" { return help(words.dropFirst().first) }
        guard let group = groups.first(where: { $0.verbs.contains(verb) }) else {
            return ["error: unknown command \(ConsoleText.quote(verb)) (type help)".replacingDoubleSpace]
        }
        return group.run(words)
    }

    private static func isBounded(_ word: String) -> Bool {
        let count = word.utf8.count
        return count <= maxWordBytes || (count <= maxHexWordBytes && word.utf8.allSatisfy { Character(Unicode.Scalar($0)).isHexDigit })
    }

    private func help(_ topic: String?) -> [String] {
        let entries = groups.flatMap(\.help) + [(usage: "help [COMMAND]", summary: "this list, or one command")]
        let shown = topic.map { name in entries.filter { $0.usage.split(separator: " ").first.map(String.init) == name } } ?? entries
        guard !shown.isEmpty else { return ["error: no command \(ConsoleText.quote(topic ?? "")) (type help)".replacingDoubleSpace] }
        let width = shown.map(\.usage.count).max() ?? 0
        let rows = shown.map { "  " + $0.usage + String(repeating: " ", count: width - $0.usage.count + 2) + $0.summary }
        return (topic == nil ? ["commands:"] : []) + rows
    }

    /// The echo mask for LineConsole: the PIN of `service on PIN` echoes as stars.
    static func masksSecret(_ pending: [UInt8]) -> Bool {
        let words = String(decoding: pending, as: UTF8.self).split(whereSeparator: { $0 == " " || $0 == "\t" })
        return words.count > 2 && words[0] == "service" && words[1] == "on"
    }
}

private extension String {
    /// "unknown command  (type help)" when the word had nothing printable.
    var replacingDoubleSpace: String {
        var out = ""
        for character in self where !(character == " " && out.hasSuffix(" ")) { out.append(character) }
        return out
    }
}
