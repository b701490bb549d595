// The hex examples of docs/protocol.md as the known-answer tests read them: runs of lines made
// only of lowercase hex digits, joined (long values are split over 64-character lines).

enum DocumentHexBlocks {
    static func blocks(in doc: String) -> [String] {
        var blocks: [String] = []
        var current = ""
        for line in doc.split(separator: "\n", omittingEmptySubsequences: false) {
            if !line.isEmpty, line.allSatisfy({ $0.isHexDigit && !$0.isUppercase }) {
                current += line
            } else if !current.isEmpty {
                blocks.append(current)
                current = ""
            }
        }
        if !current.isEmpty { blocks.append(current) }
        return blocks
    }
}
