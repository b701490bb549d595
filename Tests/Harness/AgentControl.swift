// The agent's control socket (DIR/control.sock) from a test or benchmark: one request line,
// the data lines of the answer. A small twin of the agent's own client (which lives in the
// executable and cannot be imported), enough for "pair" and read-only commands.
#if canImport(Glibc)
import Glibc
#endif
import Drivers

public enum AgentControl {
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// Sends `command`; returns the data lines when the agent answers "ok", throws with the
    /// reason otherwise. Every wait is bounded by `timeoutMillis`.
    public static func request(_ command: String, socketPath: String, timeoutMillis: Int = 5000) throws -> [String] {
        let descriptor: FileDescriptor
        do { descriptor = try UnixSocket.connect(path: socketPath) } catch { throw Failure(description: "connect \(socketPath): \(error)") }
        defer { descriptor.close() }
        try descriptor.setSocketTimeouts(milliseconds: timeoutMillis)
        try descriptor.writeAll(Array((command + "\n").utf8))
        var text = ""
        // A response is a handful of short lines; anything longer is not one.
        while text.utf8.count < 16_384 {
            switch try descriptor.receive(upTo: 4096) {
            case .wouldBlock: throw Failure(description: "no answer to '\(command)' in time")
            case .closed: throw Failure(description: "the agent closed the control connection")
            case .data(let bytes):
                text += String(decoding: bytes, as: UTF8.self)
                let lines = text.split(separator: "\n", omittingEmptySubsequences: true).map(String.init)
                guard text.hasSuffix("\n"), let last = lines.last else { continue }
                if last == "ok" { return Array(lines.dropLast()) }
                if last.hasPrefix("error ") { throw Failure(description: String(last.dropFirst(6))) }
            }
        }
        throw Failure(description: "oversized control response")
    }
}
