// A runtime failure with a one-line message (exit 1), as opposed to a usage error (exit 2).
struct ToolFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
