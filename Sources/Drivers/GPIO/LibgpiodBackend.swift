// The real backend over libgpiod v1.6 (the character-device API; sysfs GPIO is gone from
// Raspberry Pi kernels since 6.6). libgpiod objects are not thread-safe, so every call into the
// library happens under one lock; GPIO calls are a few microseconds, contention is irrelevant.
// Inputs are requested for both-edge events, so the agent sleeps on each line's event
// descriptor; a line whose chip cannot raise edge interrupts falls back to a plain input
// (no descriptor: the agent samples it).
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CGPIOD
import Synchronization

public final class LibgpiodBackend: GPIOBackend {
    private struct LineKey: Hashable {
        var chip: String
        var line: UInt32
    }

    private struct State {
        var chips: [String: OpaquePointer] = [:]
        var lines: [LineKey: OpaquePointer] = [:]
    }

    private let state = Mutex(State())

    public init() {}

    deinit { close() }

    /// The libgpiod version linked in, for `status` output and bug reports.
    public static var libraryVersion: String { String(cString: gpiod_version_string()) }

    public func requestOutput(_ config: GPIOLineConfig, role: String) throws(GPIOError) -> any GPIOOutputLine {
        try request(config, role: role, output: true)
    }

    public func requestInput(_ config: GPIOLineConfig, role: String) throws(GPIOError) -> any GPIOInputLine {
        try request(config, role: role, output: false)
    }

    /// Releases every line (outputs fall back to their released state) and closes the chips.
    public func close() {
        state.withLock { state in
            for line in state.lines.values { gpiod_line_release(line) }
            for chip in state.chips.values { gpiod_chip_close(chip) }
            state.lines = [:]
            state.chips = [:]
        }
    }

    private func request(_ config: GPIOLineConfig, role: String, output: Bool) throws(GPIOError) -> LibgpiodLine {
        let reference = GPIOLineReference(role: role, chip: config.chip, line: config.line)
        let key = LineKey(chip: config.chip, line: config.line)
        let flags = Self.requestFlags(config, output: output)
        let edgeDescriptor = try state.withLock { (state: inout State) throws(GPIOError) -> FileDescriptor? in
            // Two roles on one line is a board-file error caught at parse time; this catches
            // the same line requested twice through the API.
            if state.lines[key] != nil { throw .lineBusy(reference, consumer: gpioConsumer(role: role)) }
            let chip = try Self.openChip(config.chipAddress, role: role, cache: &state.chips)
            let count = UInt32(gpiod_chip_num_lines(chip))
            guard config.line < count else { throw .lineOutOfRange(reference, lineCount: count) }
            guard let line = gpiod_chip_get_line(chip, config.line) else {
                throw .ioFailed(reference, operation: "get line", errno: Errno.current("gpiod_chip_get_line"))
            }
            let consumer = gpioConsumer(role: role)
            // Outputs start at logical 0, the inactive (safe) level, set atomically with the
            // direction by the kernel, so the line never glitches active.
            var result: Int32
            var events = false
            if output {
                result = gpiod_line_request_output_flags(line, consumer, flags, 0)
            } else {
                result = gpiod_line_request_both_edges_events_flags(line, consumer, flags)
                events = result == 0
                // Busy is busy either way; anything else (no interrupt on this chip) gets a
                // plain input the agent samples.
                if result != 0 && errno != EBUSY { result = gpiod_line_request_input_flags(line, consumer, flags) }
            }
            guard result == 0 else {
                let failure = Errno.current("request line")
                if failure.rawValue == EBUSY {
                    _ = gpiod_line_update(line)
                    let holder = gpiod_line_consumer(line).map { String(cString: $0) }
                    throw .lineBusy(reference, consumer: holder)
                }
                throw .requestRejected(reference, errno: failure)
            }
            state.lines[key] = line
            guard events else { return nil }
            // Non-blocking, so draining stops at EAGAIN instead of waiting for the next edge.
            let fd = gpiod_line_event_get_fd(line)
            let fileFlags = fd >= 0 ? fcntl(fd, F_GETFL) : -1
            guard fileFlags >= 0, fcntl(fd, F_SETFL, fileFlags | O_NONBLOCK) == 0 else {
                let failure = Errno.current("event descriptor")
                gpiod_line_release(line)
                state.lines[key] = nil
                throw .ioFailed(reference, operation: "event descriptor", errno: failure)
            }
            return FileDescriptor(rawValue: fd)
        }
        return LibgpiodLine(backend: self, reference: reference, edgeDescriptor: edgeDescriptor)
    }

    private static func openChip(_ address: GPIOChipAddress, role: String, cache: inout [String: OpaquePointer]) throws(GPIOError) -> OpaquePointer {
        if let open = cache[address.text] { return open }
        let chip: OpaquePointer?
        switch address {
        case .path(let path): chip = gpiod_chip_open(path)
        case .name(let name): chip = gpiod_chip_open_by_name(name)
        case .label(let label): chip = gpiod_chip_open_by_label(label)
        }
        guard let chip else {
            let failure = Errno.current("open GPIO chip \(address.text)")
            // ENOENT: no such device or label. ENODEV/ENOTTY: the path exists but is no GPIO chip.
            if [ENOENT, ENODEV, ENOTTY].contains(failure.rawValue) {
                throw .chipNotFound(chip: address, role: role)
            }
            throw .chipUnavailable(chip: address, role: role, errno: failure)
        }
        cache[address.text] = chip
        return chip
    }

    private static func requestFlags(_ config: GPIOLineConfig, output: Bool) -> Int32 {
        var flags: Int32 = 0
        if config.activeLow { flags |= Int32(GPIOD_LINE_REQUEST_FLAG_ACTIVE_LOW) }
        switch config.bias {
        case .disabled: flags |= Int32(GPIOD_LINE_REQUEST_FLAG_BIAS_DISABLE)
        case .pullUp: flags |= Int32(GPIOD_LINE_REQUEST_FLAG_BIAS_PULL_UP)
        case .pullDown: flags |= Int32(GPIOD_LINE_REQUEST_FLAG_BIAS_PULL_DOWN)
        case .asIs: break
        }
        // Drive flags are invalid on inputs (the kernel rejects them), so they apply to outputs only.
        if output {
            switch config.drive {
            case .pushPull: break
            case .openDrain: flags |= Int32(GPIOD_LINE_REQUEST_FLAG_OPEN_DRAIN)
            case .openSource: flags |= Int32(GPIOD_LINE_REQUEST_FLAG_OPEN_SOURCE)
            }
        }
        return flags
    }

    // MARK: - Line operations, called by LibgpiodLine

    fileprivate func setValue(_ reference: GPIOLineReference, active: Bool) throws(GPIOError) {
        try withLine(reference) { (line: OpaquePointer) throws(GPIOError) in
            guard gpiod_line_set_value(line, active ? 1 : 0) == 0 else {
                throw .ioFailed(reference, operation: "set value", errno: Errno.current("gpiod_line_set_value"))
            }
        }
    }

    fileprivate func getValue(_ reference: GPIOLineReference) throws(GPIOError) -> Bool {
        try withLine(reference) { (line: OpaquePointer) throws(GPIOError) -> Bool in
            let value = gpiod_line_get_value(line)
            guard value >= 0 else {
                throw .ioFailed(reference, operation: "get value", errno: Errno.current("gpiod_line_get_value"))
            }
            return value == 1
        }
    }

    /// Reads every queued edge event of an event-requested line (the kernel keeps up to 16 per
    /// line, more are dropped: the level read afterwards is what counts).
    fileprivate func drainEdges(_ reference: GPIOLineReference) throws(GPIOError) -> Int {
        try withLine(reference) { (line: OpaquePointer) throws(GPIOError) -> Int in
            var events = [gpiod_line_event](repeating: gpiod_line_event(), count: 16)
            var total = 0
            while true {
                let n = events.withUnsafeMutableBufferPointer { gpiod_line_event_read_multiple(line, $0.baseAddress, UInt32($0.count)) }
                if n < 0 {
                    if errno == EAGAIN || errno == EWOULDBLOCK { return total }
                    throw .ioFailed(reference, operation: "read edge events", errno: Errno.current("gpiod_line_event_read_multiple"))
                }
                total += Int(n)
                if n < events.count { return total }
            }
        }
    }

    fileprivate func release(_ reference: GPIOLineReference) {
        state.withLock { state in
            if let line = state.lines.removeValue(forKey: LineKey(chip: reference.chip, line: reference.line)) {
                gpiod_line_release(line)
            }
        }
    }

    private func withLine<T: Sendable>(_ reference: GPIOLineReference, _ body: (OpaquePointer) throws(GPIOError) -> T) throws(GPIOError) -> T {
        try state.withLock { (state: inout State) throws(GPIOError) -> T in
            guard let line = state.lines[LineKey(chip: reference.chip, line: reference.line)] else {
                throw .released(reference)
            }
            return try body(line)
        }
    }
}

/// A handle on one requested line; the pointer itself stays inside the backend's lock.
final class LibgpiodLine: GPIOOutputLine, GPIOInputLine {
    let backend: LibgpiodBackend
    let reference: GPIOLineReference
    let edgeDescriptor: FileDescriptor?

    init(backend: LibgpiodBackend, reference: GPIOLineReference, edgeDescriptor: FileDescriptor?) {
        self.backend = backend
        self.reference = reference
        self.edgeDescriptor = edgeDescriptor
    }

    func drainEdges() throws(GPIOError) -> Int {
        guard edgeDescriptor != nil else { return 0 }
        return try backend.drainEdges(reference)
    }

    func setActive(_ active: Bool) throws(GPIOError) { try backend.setValue(reference, active: active) }
    func isActive() throws(GPIOError) -> Bool { try backend.getValue(reference) }
    func release() { backend.release(reference) }
}
