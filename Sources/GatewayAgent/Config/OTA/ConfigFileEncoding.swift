// Writes a config tree back as JSON: keys sorted, two-space indent, one key per line, so the
// file the car writes is stable (the same settings give the same bytes) and readable.
import Drivers

enum ConfigFileEncoding {
    static func encode(_ tree: JSONTree) -> [UInt8] {
        var out = ""
        write(tree, indent: "", into: &out)
        out += "\n"
        return Array(out.utf8)
    }

    private static func write(_ tree: JSONTree, indent: String, into out: inout String) {
        switch tree {
        case .null: out += "null"
        case .bool(let value): out += value ? "true" : "false"
        case .integer(let value): out += String(value)
        // Swift prints the shortest text that reads back as the same Double.
        case .number(let value): out += value.isFinite ? "\(value)" : "null"
        case .string(let text): out += JSONValue.string(text).serialized
        case .array(let items):
            out += "[" + items.map { item in var text = ""; write(item, indent: indent, into: &text); return text }.joined(separator: ", ") + "]"
        case .object(let fields):
            guard !fields.isEmpty else { out += "{}"; return }
            let inner = indent + "  "
            out += "{\n"
            for (index, key) in fields.keys.sorted().enumerated() {
                out += inner + JSONValue.string(key).serialized + ": "
                write(fields[key]!, indent: inner, into: &out)
                out += index + 1 < fields.count ? ",\n" : "\n"
            }
            out += indent + "}"
        }
    }
}
