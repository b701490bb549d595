// One group of console commands (status; gpio; service and actuate; keys, events and pair;
// sim). The dispatcher routes by the first word; a group answers with lines, errors as one
// line starting "error: ". Groups run on the agent's loop thread only.

protocol ConsoleCommandGroup: AnyObject {
    /// (usage, one-line summary) per command, for `help`.
    var help: [(usage: String, summary: String)] { get }
    /// The first words this group answers.
    var verbs: Set<String> { get }
    /// `words[0]` is one of `verbs`; the rest are its arguments (at most 7, each bounded).
    func run(_ words: [String]) -> [String]
}

enum ConsoleText {
    /// A word from the input quoted in an error: printable ASCII only and short, so an error
    /// line can neither carry control sequences nor become a flood.
    static func quote(_ word: String) -> String {
        let clean = word.unicodeScalars.filter { (0x21...0x7E).contains($0.value) }
        let text = String(String.UnicodeScalarView(clean.prefix(24)))
        return text.isEmpty ? "" : "'" + text + (clean.count > 24 ? "...'" : "'")
    }

    static func usage(_ usage: String) -> [String] { ["error: usage: \(usage)"] }
}
