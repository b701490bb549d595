// docs/cloud.md as the known-answer tests read it: the text, the Topics table and fenced blocks.
import Foundation

enum CloudDocument {
    static var text: String {
        let root = #filePath.components(separatedBy: "/Tests/")[0]
        return (try? String(contentsOfFile: root + "/docs/cloud.md", encoding: .utf8)) ?? ""
    }

    /// The Topics table: (topic with {id}, "car → cloud" or "cloud → car").
    static func topics(in doc: String) -> [(topic: String, direction: String)] {
        doc.split(separator: "\n").compactMap { line in
            guard line.hasPrefix("| `vehicles/{id}/") else { return nil }
            let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count >= 2 else { return nil }
            return (cells[0].trimmingCharacters(in: CharacterSet(charactersIn: "`")), cells[1])
        }
    }

    /// The lines of a fenced block from the line `startLine` (included) to the fence's end.
    static func block(startingWith startLine: String, in doc: String) -> String? {
        let lines = doc.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard let start = lines.firstIndex(of: startLine) else { return nil }
        guard let end = lines[start...].firstIndex(where: { $0.hasPrefix("```") }) else { return nil }
        return lines[start..<end].joined(separator: "\n")
    }
}
