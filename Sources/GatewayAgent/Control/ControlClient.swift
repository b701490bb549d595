// The client end of DIR/control.sock (`carkey-agent pair`): one request, its response, every
// wait bounded.
#if canImport(Glibc)
import Glibc
#endif
import Drivers
import Protocol

enum ControlClientError: Error, Equatable, CustomStringConvertible {
    /// Nothing listens on the socket: no agent runs for this state directory.
    case noAgent(path: String)
    case permissionDenied(path: String)
    case io(Errno)
    case timedOut
    /// The agent closed the connection before the response was complete.
    case closedEarly
    case invalidResponse

    var description: String {
        switch self {
        case .noAgent(let path): return "no agent is running for this state directory (nothing listens on \(path))"
        case .permissionDenied(let path): return "permission denied on \(path): run as the agent's user"
        case .io(let error): return "control socket: \(error)"
        case .timedOut: return "the agent did not answer in time"
        case .closedEarly: return "the agent closed the control connection"
        case .invalidResponse: return "the agent sent something that is not a control response"
        }
    }
}

enum ControlClient {
    /// A conformance report of its last links is the longest answer.
    static let maxResponseLines = 1024

    static func request(_ command: String, socketPath: String, timeoutMillis: Int = 5000) throws(ControlClientError) -> ControlResponse {
        let descriptor: FileDescriptor
        do throws(Errno) {
            descriptor = try UnixSocket.connect(path: socketPath)
        } catch {
            switch error.rawValue {
            case ENOENT, ECONNREFUSED, ENOTSOCK: throw .noAgent(path: socketPath)
            case EACCES, EPERM: throw .permissionDenied(path: socketPath)
            default: throw .io(error)
            }
        }
        defer { descriptor.close() }
        try io { () throws(Errno) in try descriptor.setSocketTimeouts(milliseconds: timeoutMillis) }
        let request = Bytes((command + "\n").utf8)
        var offset = 0
        while offset < request.count {
            let sent = try io { () throws(Errno) in try descriptor.sendSome(request[offset...]) }
            guard sent > 0 else { throw .timedOut }
            offset += sent
        }
        var assembler = LineAssembler(maxLineBytes: ControlProtocol.maxLineBytes)
        var lines: [String] = []
        while true {
            switch try io({ () throws(Errno) in try descriptor.receive(upTo: 4096) }) {
            case .wouldBlock: throw .timedOut
            case .closed: throw .closedEarly
            case .data(let bytes):
                for event in assembler.feed(bytes) {
                    guard case .line(let line) = event, lines.count < maxResponseLines else { throw .invalidResponse }
                    lines.append(line)
                    if ControlResponse.isFinal(line) {
                        guard let response = ControlResponse(wireLines: lines) else { throw .invalidResponse }
                        return response
                    }
                }
            }
        }
    }

    private static func io<T>(_ body: () throws(Errno) -> T) throws(ControlClientError) -> T {
        do throws(Errno) { return try body() } catch { throw .io(error) }
    }
}
