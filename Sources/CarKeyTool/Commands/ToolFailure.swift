import Drivers
#if canImport(Glibc)
import Glibc
#endif

// A runtime failure with a one-line message (exit 1), as opposed to a usage error (exit 2).
struct ToolFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Why an --out file was not written. An existing file is kept unless --force was given: the
/// message says so, since "File exists" alone does not say how to go on.
enum OutputFile {
    static func failure(_ path: String, _ error: Errno) -> ToolFailure {
        guard error.rawValue == EEXIST else { return ToolFailure("cannot write \(path): \(error)") }
        return ToolFailure("\(path) already exists, left as it was: give --force to replace it, or another --out")
    }
}
