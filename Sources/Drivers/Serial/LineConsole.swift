// A line-oriented console transport: reads lines from a descriptor, hands each to a handler
// that returns the answer lines, and writes them back. The command set (help, status, ...)
// lives in the agent and is plugged in as the handler; this file knows nothing about it.
//
// It never blocks the caller for long: reads wait in poll(2) for at most the given timeout,
// and writes give up with `.outputStalled` when the other side stops reading.
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Synchronization

public final class LineConsole: Sendable {
    public typealias Handler = @Sendable (String) -> [String]
    /// Given the line typed so far (the new byte included), true to echo `*` instead of the
    /// byte: a secret typed on the console (a PIN) must not be echoed back to the screen.
    public typealias EchoMask = @Sendable (_ pendingLine: [UInt8]) -> Bool

    public enum Status: Sendable, Equatable {
        case open
        /// End of file or hang-up: the cable side went away (stdin closed, pty master closed).
        case closed
    }

    /// Bytes read per poll: bounds the work done per call so the agent's loop keeps its rhythm.
    static let readChunk = 1024

    private let input: FileDescriptor
    private let output: FileDescriptor
    private let echo: Bool
    private let prompt: String?
    private let writeTimeoutMillis: UInt64
    private let clock: any MonotonicClock
    private let handler: Handler
    private let echoMask: EchoMask?
    private let assembler: Mutex<LineAssembler>

    /// - Parameters:
    ///   - input/output: the same tty descriptor twice, or stdin and stdout for `--console stdio`.
    ///   - echo: echo typed characters back (a raw tty does not; terminal programs expect it).
    ///   - prompt: written after each answer, e.g. "carkey> "; nil for none (scripts, tests).
    ///   - clock: measures the write timeout; poll itself always waits in real time.
    public init(input: FileDescriptor, output: FileDescriptor, maxLineBytes: Int = LineAssembler.defaultMaxLineBytes,
                echo: Bool = false, prompt: String? = nil, writeTimeoutMillis: UInt64 = 1000,
                clock: any MonotonicClock = SystemClock(), echoMask: EchoMask? = nil, handler: @escaping Handler) {
        self.input = input
        self.output = output
        self.echo = echo
        self.prompt = prompt
        self.writeTimeoutMillis = writeTimeoutMillis
        self.clock = clock
        self.handler = handler
        self.echoMask = echoMask
        self.assembler = Mutex(LineAssembler(maxLineBytes: maxLineBytes))
    }

    public var maxLineBytes: Int { assembler.withLock { $0.maxLineBytes } }

    /// Writes the prompt, if any: call once when the console starts.
    public func start() throws(SerialError) {
        if let prompt { try writeBytes(Array(prompt.utf8)) }
    }

    /// Waits up to `timeoutMillis` for input, answers every complete line in it, and returns.
    /// Returns `.closed` on end of file or hang-up; the caller decides whether to reopen.
    @discardableResult
    public func poll(timeoutMillis: Int32) throws(SerialError) -> Status {
        let events = try input.poll(events: Int16(POLLIN), timeoutMillis: timeoutMillis)
        if events == 0 { return .open }
        if events & Int16(POLLIN) == 0 {
            // POLLHUP/POLLERR without data: nothing more will come.
            return events & Int16(POLLHUP | POLLERR | POLLNVAL) != 0 ? .closed : .open
        }
        guard let bytes = try input.readAvailable(upTo: Self.readChunk) else { return .open }
        if bytes.isEmpty { return .closed }

        var out: [UInt8] = []
        for byte in bytes {
            let step = assembler.withLock { $0.feed(byte) }
            switch step {
            case .line(let line):
                if echo { out += [0x0D, 0x0A] }
                let trimmed = line.trimmingSpaces
                if !trimmed.isEmpty {
                    for answer in handler(trimmed) { out += Self.terminalSafe(answer) }
                }
                if let prompt { out += Array(prompt.utf8) }
            case .tooLong:
                if echo { out += [0x0D, 0x0A] }
                out += Self.terminalSafe("error: line too long (max \(maxLineBytes) bytes), discarded")
            case .appended(let byte):
                if echo {
                    let masked = echoMask.map { mask in mask(assembler.withLock { $0.pendingBytes }) } ?? false
                    out.append(masked ? UInt8(ascii: "*") : byte)
                }
            case .erased:
                if echo { out += [0x08, 0x20, 0x08] }
            case .ignored:
                break
            }
        }
        if !out.isEmpty { try writeBytes(out) }
        return .open
    }

    /// Writes lines that are not answers (event notices), each ended with CRLF.
    public func write(lines: [String]) throws(SerialError) {
        try writeBytes(lines.flatMap(Self.terminalSafe))
    }

    /// CRLF-terminated bytes with control characters removed: an answer may contain text from
    /// outside (a key's display name), and an escape sequence must not reach the terminal.
    static func terminalSafe(_ line: String) -> [UInt8] {
        var bytes: [UInt8] = []
        for scalar in line.unicodeScalars {
            switch scalar.value {
            case 0x09, 0x20..<0x7F, 0xA0...: bytes += Array(String(scalar).utf8)
            case 0x0A: bytes += [0x0D, 0x0A] // a multi-line answer still gets CRLF line ends
            default: continue
            }
        }
        return bytes + [0x0D, 0x0A]
    }

    /// Writes everything or fails after the write timeout, waiting in poll for room.
    private func writeBytes(_ bytes: [UInt8]) throws(SerialError) {
        let start = clock.nowMillis()
        var offset = 0
        while offset < bytes.count {
            let written = try output.writeSome(bytes[offset...])
            offset += written
            if written > 0 { continue }
            let waited = clock.nowMillis() &- start
            guard waited < writeTimeoutMillis else { throw .outputStalled(afterMillis: waited) }
            let remaining = Int32(clamping: writeTimeoutMillis - waited)
            _ = try output.poll(events: Int16(POLLOUT), timeoutMillis: remaining)
        }
    }
}

private extension String {
    /// Leading and trailing spaces and tabs removed (commands are compared by word).
    var trimmingSpaces: String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else { return "" }
        return String(self[first...last])
    }
}
