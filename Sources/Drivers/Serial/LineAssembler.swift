// Bounded line assembly from raw serial bytes. Pure: no I/O, so every odd input is unit-tested.
//
// CR, LF and CRLF each end one line (terminal programs send CR, scripts LF, Windows CRLF).
// A line longer than the limit yields one `.tooLong` and is discarded up to the next line end,
// so a flood can neither grow memory nor be half-executed as a command. NUL and other control
// bytes are dropped; invalid UTF-8 becomes U+FFFD when the line is decoded. Backspace and DEL
// erase the last character, so a human typing in picocom can correct mistakes.

public struct LineAssembler: Sendable {
    public static let defaultMaxLineBytes = 256

    /// What one input byte did.
    public enum Step: Sendable, Equatable {
        /// A complete line (without its terminator).
        case line(String)
        /// The current line passed the limit; it will be discarded up to the next line end.
        case tooLong
        /// The byte was added to the current line.
        case appended(UInt8)
        /// A backspace removed the last character.
        case erased
        /// The byte had no effect (control byte, LF after CR, discarded overflow, empty erase).
        case ignored
    }

    public let maxLineBytes: Int
    private var buffer: [UInt8] = []
    private var discarding = false
    private var afterCR = false

    public init(maxLineBytes: Int = defaultMaxLineBytes) {
        self.maxLineBytes = max(1, maxLineBytes)
        buffer.reserveCapacity(self.maxLineBytes)
    }

    /// Bytes of the line being typed (nothing while an overlong line is being discarded).
    public var pendingByteCount: Int { buffer.count }

    /// The line typed so far (for echo decisions such as masking a PIN).
    public var pendingBytes: [UInt8] { buffer }

    public mutating func feed(_ byte: UInt8) -> Step {
        let wasAfterCR = afterCR
        afterCR = byte == 0x0D
        switch byte {
        case 0x0D, 0x0A:
            // The LF of a CRLF pair ends nothing more.
            if byte == 0x0A && wasAfterCR { return .ignored }
            defer { buffer.removeAll(keepingCapacity: true) }
            if discarding {
                discarding = false
                return .ignored
            }
            return .line(String(decoding: buffer, as: UTF8.self))
        case 0x08, 0x7F:
            guard !discarding, !buffer.isEmpty else { return .ignored }
            // Remove a whole UTF-8 character: its continuation bytes, then the lead byte.
            while let last = buffer.last, last & 0xC0 == 0x80 { buffer.removeLast() }
            if !buffer.isEmpty { buffer.removeLast() }
            return .erased
        case 0x09, 0x20...0x7E, 0x80...0xFF:
            if discarding { return .ignored }
            guard buffer.count < maxLineBytes else {
                discarding = true
                buffer.removeAll(keepingCapacity: true)
                return .tooLong
            }
            buffer.append(byte)
            return .appended(byte)
        default:
            return .ignored
        }
    }

    /// Line events only (no echo information), for callers that just want lines.
    public enum Event: Sendable, Equatable {
        case line(String)
        case tooLong
    }

    public mutating func feed(_ bytes: some Sequence<UInt8>) -> [Event] {
        var events: [Event] = []
        for byte in bytes {
            switch feed(byte) {
            case .line(let text): events.append(.line(text))
            case .tooLong: events.append(.tooLong)
            case .appended, .erased, .ignored: break
            }
        }
        return events
    }
}
