// The agent's local control line protocol, shared by every transport (DIR/control.sock today,
// the serial console next) and by `carkey-agent pair`:
//
//   request:  one line, a command and its arguments separated by spaces, e.g. "pair"
//   response: zero or more data lines, then exactly one final line:
//             "ok", or "error " followed by a one-line reason
//
// Lines end with LF (CR and CRLF are accepted) and are at most 256 bytes. Data lines are
// "name value..." so scripts can pick fields, e.g. "code 123456 expires-in 60".

enum ControlProtocol {
    static let socketFileName = "control.sock"
    static let maxLineBytes = 256
    static let okLine = "ok"
    static let errorPrefix = "error "
}

/// The answer to one control command.
struct ControlResponse: Equatable {
    var lines: [String]
    /// nil for success; otherwise the one-line reason.
    var error: String?

    static func ok(_ lines: [String] = []) -> ControlResponse { ControlResponse(lines: lines, error: nil) }
    static func failure(_ reason: String, lines: [String] = []) -> ControlResponse { ControlResponse(lines: lines, error: reason) }

    /// The lines a transport sends, final line included. Reasons and data never span lines.
    var wireLines: [String] {
        lines.map(Self.oneLine) + [error.map { ControlProtocol.errorPrefix + Self.oneLine($0) } ?? ControlProtocol.okLine]
    }

    /// Parses the lines a transport received (the final line last); nil when it is not one.
    init?(wireLines: [String]) {
        guard let last = wireLines.last else { return nil }
        if last == ControlProtocol.okLine {
            self.init(lines: Array(wireLines.dropLast()), error: nil)
        } else if last.hasPrefix(ControlProtocol.errorPrefix) {
            self.init(lines: Array(wireLines.dropLast()), error: String(last.dropFirst(ControlProtocol.errorPrefix.count)))
        } else {
            return nil
        }
    }

    init(lines: [String], error: String?) {
        self.lines = lines
        self.error = error
    }

    static func isFinal(_ line: String) -> Bool { line == ControlProtocol.okLine || line.hasPrefix(ControlProtocol.errorPrefix) }

    private static func oneLine(_ text: String) -> String {
        String(text.map { $0.isNewline ? " " : $0 })
    }
}
