// Just enough JSON writing for the detail of events the store raises itself (and the test
// harness's attack report lines).

public enum JSONText {
    /// A JSON object of string values, keys in the given order.
    static func object(_ pairs: [(String, String)]) -> String {
        "{" + pairs.map { quote($0.0) + ":" + quote($0.1) }.joined(separator: ",") + "}"
    }

    /// A JSON string literal with quotes, backslashes and control characters escaped.
    public static func quote(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 {
                    let hex = String(scalar.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }
}
