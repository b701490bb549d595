// A line-oriented console transport: reads lines from a descriptor, hands each to a handler
// that returns the answer lines, and writes them back. The command set (help, status, ...)
// lives in the agent and is plugged in as the handler; this file knows nothing about it.
//
// It never blocks the caller: reads wait in poll(2) for at most the given timeout, at most
// `maxLinesPerPoll` lines are answered per call (the rest of the bytes wait for the next), and
// output goes to a bounded queue written without waiting (BoundedOutput): when the other side
// stops reading, whole lines are dropped and counted, and the caller polls for writable while
// `wantsWrite` says bytes wait.
#if canImport(Glibc)
import Glibc
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
    /// Lines answered per poll: a flood of `status` lines must not hold the loop for a whole
    /// read chunk's worth of commands (about 140); the rest is answered on the next calls.
    public static let maxLinesPerPoll = 8

    private let input: FileDescriptor
    private let output: FileDescriptor
    private let echo: Bool
    private let prompt: String?
    private let handler: Handler
    private let echoMask: EchoMask?
    private let assembler: Mutex<LineAssembler>
    private let queue: Mutex<BoundedOutput>
    /// Bytes read but not yet fed (the lines past `maxLinesPerPoll`).
    private let carried = Mutex<[UInt8]>([])

    /// - Parameters:
    ///   - input/output: the same tty descriptor twice, or stdin and stdout for `--console stdio`.
    ///   - echo: echo typed characters back (a raw tty does not; terminal programs expect it).
    ///   - prompt: written after each answer, e.g. "carkey> "; nil for none (scripts, tests).
    ///   - outputCapacity: most bytes queued for a slow or absent reader before lines drop.
    public init(input: FileDescriptor, output: FileDescriptor, maxLineBytes: Int = LineAssembler.defaultMaxLineBytes,
                echo: Bool = false, prompt: String? = nil, outputCapacity: Int = BoundedOutput.defaultCapacity,
                echoMask: EchoMask? = nil, handler: @escaping Handler) {
        self.input = input
        self.output = output
        self.echo = echo
        self.prompt = prompt
        self.handler = handler
        self.echoMask = echoMask
        self.assembler = Mutex(LineAssembler(maxLineBytes: maxLineBytes))
        self.queue = Mutex(BoundedOutput(capacity: outputCapacity))
    }

    public var maxLineBytes: Int { assembler.withLock { $0.maxLineBytes } }

    /// Bytes wait in the output queue: poll the output for writable and call `flush()`.
    public var wantsWrite: Bool { queue.withLock { !$0.isEmpty } }
    /// Input was read but not all of it answered yet: call `poll` again without waiting.
    public var hasCarriedInput: Bool { carried.withLock { !$0.isEmpty } }
    /// Answer lines dropped because the queue was full (nobody reading), since start.
    public var droppedLines: Int { queue.withLock { $0.droppedLines } }

    /// Set by a drop that started an episode (the queue was not full before); read and
    /// cleared by the caller to log one line per episode.
    private let episodeStarted = Mutex(false)
    public func takeDropEpisodeStarted() -> Bool { episodeStarted.withLock { value in defer { value = false }; return value } }

    /// Queues the prompt, if any: call once when the console starts.
    public func start() throws(SerialError) {
        if let prompt { try enqueue(Array(prompt.utf8), isLine: false) }
        try flush()
    }

    /// Writes what the output takes now, never waiting.
    public func flush() throws(SerialError) {
        try queue.withLock { (queue) throws(SerialError) in _ = try queue.flush(to: output) }
    }

    /// Waits up to `timeoutMillis` for input, answers every complete line in it, and returns.
    /// Returns `.closed` on end of file or hang-up; the caller decides whether to reopen.
    @discardableResult
    public func poll(timeoutMillis: Int32) throws(SerialError) -> Status {
        var bytes = carried.withLock { value in defer { value = [] }; return value }
        if bytes.isEmpty {
            let events = try input.poll(events: Int16(POLLIN), timeoutMillis: timeoutMillis)
            if events == 0 { return .open }
            if events & Int16(POLLIN) == 0 {
                // POLLHUP/POLLERR without data: nothing more will come.
                return events & Int16(POLLHUP | POLLERR | POLLNVAL) != 0 ? .closed : .open
            }
            guard let read = try input.readAvailable(upTo: Self.readChunk) else { return .open }
            if read.isEmpty { return .closed }
            bytes = read
        }

        var lines = 0
        for (index, byte) in bytes.enumerated() {
            guard lines < Self.maxLinesPerPoll else {
                carried.withLock { $0 = Array(bytes[index...]) }
                break
            }
            let step = assembler.withLock { $0.feed(byte) }
            switch step {
            case .line(let line):
                lines += 1
                if echo { try enqueue([0x0D, 0x0A], isLine: false) }
                let trimmed = line.trimmingSpaces
                if !trimmed.isEmpty {
                    for answer in handler(trimmed) { try enqueue(Self.terminalSafe(answer), isLine: true) }
                }
                if let prompt { try enqueue(Array(prompt.utf8), isLine: false) }
            case .tooLong:
                if echo { try enqueue([0x0D, 0x0A], isLine: false) }
                try enqueue(Self.terminalSafe("error: line too long (max \(maxLineBytes) bytes), discarded"), isLine: true)
            case .appended(let byte):
                if echo {
                    let masked = echoMask.map { mask in mask(assembler.withLock { $0.pendingBytes }) } ?? false
                    try enqueue([masked ? UInt8(ascii: "*") : byte], isLine: false)
                }
            case .erased:
                if echo { try enqueue([0x08, 0x20, 0x08], isLine: false) }
            case .ignored:
                break
            }
        }
        try flush()
        return .open
    }

    /// Queues lines that are not answers (event notices), each ended with CRLF, and writes
    /// what the output takes now.
    public func write(lines: [String]) throws(SerialError) {
        for line in lines { try enqueue(Self.terminalSafe(line), isLine: true) }
        try flush()
    }

    /// Queues `bytes`; when they do not fit, first hands the kernel what it takes now (a
    /// reader that is merely slow loses nothing), and drops them only if that made no room.
    private func enqueue(_ bytes: [UInt8], isLine: Bool) throws(SerialError) {
        let admission = try queue.withLock { (queue) throws(SerialError) -> BoundedOutput.Admission in
            if queue.pendingCount + bytes.count > queue.capacity { _ = try queue.flush(to: output) }
            return queue.enqueue(bytes, isLine: isLine)
        }
        if case .dropped(episodeStarted: true) = admission { episodeStarted.withLock { $0 = true } }
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
}

private extension String {
    /// Leading and trailing spaces and tabs removed (commands are compared by word).
    var trimmingSpaces: String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else { return "" }
        return String(self[first...last])
    }
}
