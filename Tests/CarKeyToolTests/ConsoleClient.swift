// The engineer's end of the agent's console in tests: opens the pty slave path the agent
// printed (like picocom would), types lines and reads answers. Every read is bounded.
import XCTest
import Drivers
#if canImport(Glibc)
import Glibc
#endif

final class ConsoleClient {
    private let port: SerialPort
    /// Everything read so far and not yet consumed by `read(until:)`.
    private var pending: [UInt8] = []

    init(path: String) throws {
        port = try SerialPort.open(path: path)
    }

    deinit { port.close() }

    func type(_ text: String) throws { try type(Array(text.utf8)) }

    func type(_ bytes: [UInt8]) throws {
        var offset = 0
        let deadline = Self.now() + 2
        while offset < bytes.count && Self.now() < deadline {
            let n = bytes[offset...].withUnsafeBytes { write(port.descriptor.rawValue, $0.baseAddress, $0.count) }
            if n > 0 { offset += n } else { usleep(1000) }
        }
    }

    /// Discards whatever came before (an early prompt, a notice) by typing a unique unknown
    /// word and reading up to its error answer and the prompt after it.
    func sync() throws {
        let marker = "sync-\(UInt32.random(in: 0...UInt32.max))"
        try type(marker + "\r")
        _ = read(until: "'\(marker)' (type help)")
        _ = read(until: "carkey> ")
    }

    /// Types `line` with CR (what a terminal program sends) and returns the output up to the
    /// next prompt after the answer.
    @discardableResult
    func command(_ line: String, timeoutSeconds: Double = 5) throws -> String {
        try type(line + "\r")
        return read(until: "carkey> ", timeoutSeconds: timeoutSeconds)
    }

    /// Reads until `marker` has arrived (returned text includes it) or the time is up (then
    /// everything read is returned, and the caller's assertion shows it).
    func read(until marker: String, timeoutSeconds: Double = 5) -> String {
        let deadline = Self.now() + timeoutSeconds
        while true {
            let text = String(decoding: pending, as: UTF8.self)
            if let range = text.firstRange(of: marker) {
                let consumed = text[..<range.upperBound]
                pending = Array(pending.dropFirst(consumed.utf8.count))
                return String(consumed)
            }
            let left = deadline - Self.now()
            guard left > 0 else {
                pending = []
                return text
            }
            var request = pollfd(fd: port.descriptor.rawValue, events: Int16(POLLIN), revents: 0)
            _ = poll(&request, 1, Int32(min(left, 0.2) * 1000))
            var buffer = [UInt8](repeating: 0, count: 4096)
            let n = buffer.withUnsafeMutableBytes { Glibc.read(port.descriptor.rawValue, $0.baseAddress, $0.count) }
            if n > 0 { pending += buffer[0..<n] }
        }
    }

    private static func now() -> Double {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
    }
}
