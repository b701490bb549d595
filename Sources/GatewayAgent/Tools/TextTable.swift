// Aligned columns for the agent tools' text output; cells are made printable first (the event
// log is not sealed, so an edited row must not be able to drive the terminal).
enum TextTable {
    static func render(header: [String], rows: [[String]]) -> [String] {
        let all = [header] + rows.map { $0.map(printable) }
        var widths = [Int](repeating: 0, count: header.count)
        for row in all { for (index, cell) in row.enumerated() where index < widths.count { widths[index] = max(widths[index], cell.count) } }
        return all.map { row in
            var line = ""
            for (index, cell) in row.enumerated() {
                line += index == row.count - 1 ? cell : cell + String(repeating: " ", count: widths[index] - cell.count + 2)
            }
            return line
        }
    }

    /// Control characters and non-ASCII become "?"; at most 200 characters.
    static func printable(_ text: String) -> String {
        let cleaned = String(text.unicodeScalars.map { (0x20...0x7E).contains($0.value) ? Character($0) : "?" })
        return cleaned.count <= 200 ? cleaned : String(cleaned.prefix(197)) + "..."
    }
}
