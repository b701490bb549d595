// The real backend over libgpiod, 1.x or 2.x, whichever the build found (Sources/CGPIOD/shim.h
// gives both one C API). The character-device API: sysfs GPIO is gone from Raspberry Pi kernels
// since 6.6. libgpiod objects are not thread-safe, so every call into the library happens
// under one lock; GPIO calls are a few microseconds, contention is irrelevant.
// Inputs are requested for both-edge events, so the agent sleeps on each line's event
// descriptor; a line whose chip cannot raise edge interrupts falls back to a plain input
// (no descriptor: the agent samples it).
#if canImport(Glibc)
import Glibc
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
        /// Requested lines (an ock_gpiod_request each).
        var lines: [LineKey: OpaquePointer] = [:]
    }

    private let state = Mutex(State())
    private let deviceDirectory: String

    /// `deviceDirectory` is where chips are looked up by name and label (tests point it elsewhere).
    public init(deviceDirectory: String = "/dev") {
        self.deviceDirectory = deviceDirectory
    }

    deinit { close() }

    /// The libgpiod version linked in, for `status` output and bug reports.
    public static var libraryVersion: String { String(cString: ock_gpiod_version()) }

    /// The libgpiod API this build was compiled against: 1 (libgpiod 1.x) or 2 (2.x).
    public static var apiVersion: Int { Int(OCK_GPIOD_API) }

    public func requestOutput(_ config: GPIOLineConfig, role: String) throws(GPIOError) -> any GPIOOutputLine {
        try request(config, role: role, output: true)
    }

    public func requestInput(_ config: GPIOLineConfig, role: String) throws(GPIOError) -> any GPIOInputLine {
        try request(config, role: role, output: false)
    }

    /// Releases every line (outputs fall back to their released state) and closes the chips.
    public func close() {
        state.withLock { state in
            for line in state.lines.values { ock_gpiod_release(line) }
            for chip in state.chips.values { ock_gpiod_chip_close(chip) }
            state.lines = [:]
            state.chips = [:]
        }
    }

    private func request(_ config: GPIOLineConfig, role: String, output: Bool) throws(GPIOError) -> LibgpiodLine {
        let reference = GPIOLineReference(role: role, chip: config.chip, line: config.line)
        let key = LineKey(chip: config.chip, line: config.line)
        let edgeDescriptor = try state.withLock { (state: inout State) throws(GPIOError) -> FileDescriptor? in
            // Two roles on one line is a board-file error caught at parse time; this catches
            // the same line requested twice through the API.
            if state.lines[key] != nil { throw .lineBusy(reference, consumer: gpioConsumer(role: role)) }
            let chip = try openChip(config.chipAddress, role: role, cache: &state.chips)
            var count: UInt32 = 0
            guard ock_gpiod_chip_num_lines(chip, &count) == 0 else {
                throw .ioFailed(reference, operation: "read chip info", errno: Errno.current("chip info"))
            }
            guard config.line < count else { throw .lineOutOfRange(reference, lineCount: count) }
            let consumer = gpioConsumer(role: role)
            // Outputs start at logical 0, the inactive (safe) level, set atomically with the
            // direction by the kernel, so the line never glitches active.
            var line: OpaquePointer?
            var events = false
            if output {
                line = Self.request(chip, config, consumer: consumer, mode: OCK_GPIOD_OUTPUT)
            } else {
                line = Self.request(chip, config, consumer: consumer, mode: OCK_GPIOD_INPUT_EDGES)
                events = line != nil
                // Busy is busy either way; anything else (no interrupt on this chip) gets a
                // plain input the agent samples.
                if line == nil && errno != EBUSY { line = Self.request(chip, config, consumer: consumer, mode: OCK_GPIOD_INPUT) }
            }
            guard let line else {
                let failure = Errno.current("request line")
                if failure.rawValue == EBUSY { throw .lineBusy(reference, consumer: Self.holder(chip, config.line)) }
                throw .requestRejected(reference, errno: failure)
            }
            state.lines[key] = line
            guard events else { return nil }
            // Non-blocking, so draining stops at EAGAIN instead of waiting for the next edge.
            // libgpiod owns this descriptor (it reads and closes it); we only set its flag.
            let fd = ock_gpiod_event_fd(line)
            let madeNonBlocking = Result { () throws(Errno) in
                guard fd >= 0 else { throw Errno.current("event descriptor") }
                try FileDescriptor(rawValue: fd).setNonBlocking(true)
            }
            if case .failure(let failure) = madeNonBlocking {
                ock_gpiod_release(line)
                state.lines[key] = nil
                throw .ioFailed(reference, operation: "event descriptor", errno: failure)
            }
            return FileDescriptor(rawValue: fd)
        }
        return LibgpiodLine(backend: self, reference: reference, edgeDescriptor: edgeDescriptor)
    }

    private func openChip(_ address: GPIOChipAddress, role: String, cache: inout [String: OpaquePointer]) throws(GPIOError) -> OpaquePointer {
        if let open = cache[address.text] { return open }
        let chip = try LibgpiodChips.open(address, role: role, deviceDirectory: deviceDirectory)
        cache[address.text] = chip
        return chip
    }

    private static func request(_ chip: OpaquePointer, _ config: GPIOLineConfig, consumer: String, mode: Int32) -> OpaquePointer? {
        let bias: Int32
        switch config.bias {
        case .disabled: bias = OCK_GPIOD_BIAS_DISABLED
        case .pullUp: bias = OCK_GPIOD_BIAS_PULL_UP
        case .pullDown: bias = OCK_GPIOD_BIAS_PULL_DOWN
        case .asIs: bias = OCK_GPIOD_BIAS_AS_IS
        }
        // Drive settings are invalid on inputs (the kernel rejects them): outputs only.
        var drive = OCK_GPIOD_DRIVE_PUSH_PULL
        if mode == OCK_GPIOD_OUTPUT {
            switch config.drive {
            case .pushPull: drive = OCK_GPIOD_DRIVE_PUSH_PULL
            case .openDrain: drive = OCK_GPIOD_DRIVE_OPEN_DRAIN
            case .openSource: drive = OCK_GPIOD_DRIVE_OPEN_SOURCE
            }
        }
        return ock_gpiod_request(chip, config.line, consumer, mode, config.activeLow, bias, drive)
    }

    /// Who holds a busy line, as the kernel reports it (nil: unnamed, or unreadable).
    private static func holder(_ chip: OpaquePointer, _ line: UInt32) -> String? {
        var buffer = [CChar](repeating: 0, count: 64)
        guard ock_gpiod_line_consumer(chip, line, &buffer, buffer.count) == 1 else { return nil }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    // MARK: - Line operations, called by LibgpiodLine

    func setValue(_ reference: GPIOLineReference, active: Bool) throws(GPIOError) {
        try withLine(reference) { (line: OpaquePointer) throws(GPIOError) in
            guard ock_gpiod_set(line, active ? 1 : 0) == 0 else {
                throw .ioFailed(reference, operation: "set value", errno: Errno.current("set value"))
            }
        }
    }

    func getValue(_ reference: GPIOLineReference) throws(GPIOError) -> Bool {
        try withLine(reference) { (line: OpaquePointer) throws(GPIOError) -> Bool in
            let value = ock_gpiod_get(line)
            guard value >= 0 else {
                throw .ioFailed(reference, operation: "get value", errno: Errno.current("get value"))
            }
            return value == 1
        }
    }

    /// Reads every queued edge event of an event-requested line (the kernel keeps a few per
    /// line, more are dropped: the level read afterwards is what counts).
    func drainEdges(_ reference: GPIOLineReference) throws(GPIOError) -> Int {
        try withLine(reference) { (line: OpaquePointer) throws(GPIOError) -> Int in
            var total = 0
            while true {
                let n = ock_gpiod_read_edges(line)
                if n < 0 {
                    if errno == EAGAIN || errno == EWOULDBLOCK { return total }
                    throw .ioFailed(reference, operation: "read edge events", errno: Errno.current("read edge events"))
                }
                total += Int(n)
                if n < OCK_GPIOD_EDGE_BATCH { return total }
            }
        }
    }

    func release(_ reference: GPIOLineReference) {
        state.withLock { state in
            if let line = state.lines.removeValue(forKey: LineKey(chip: reference.chip, line: reference.line)) {
                ock_gpiod_release(line)
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
