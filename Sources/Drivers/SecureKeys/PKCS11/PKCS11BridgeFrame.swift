// The PKCS#11 bridge's fields (docs/pkcs11-bridge.md, "Framing"): big-endian integers and
// length-prefixed byte strings in a frame of at most `maxBody` bytes. The caps are the C
// bridge's (tools/pkcs11-bridge/frame.h); every read is checked against them and against what
// is left, so a truncated, oversized or lying frame is a typed error and never a crash.
import Protocol

public enum PKCS11BridgeFrameError: Error, Equatable, Sendable {
    /// The frame ends before a field does.
    case truncated
    /// A frame length of zero or above `PKCS11BridgeFrame.maxBody`.
    case frameLength(Int)
    /// A byte string longer than its field allows (or than the frame holds).
    case fieldTooLong(Int)
    /// More attributes or handles than the cap.
    case tooMany(Int)
    /// Bytes left after the last field.
    case trailingBytes(Int)
    /// A status or failure code this side does not know.
    case unknownCode(UInt8)
}

public enum PKCS11BridgeFrame {
    public static let maxBody = 8192
    public static let maxBytes = 4096
    public static let maxAttributes = 16
    public static let maxAttributeLength = 1024
    public static let maxHandles = 64
    public static let maxLabel = 32
    public static let maxPIN = 256
}

/// Builds one frame: a 4-byte length, then the body. The storage is reserved once for the
/// largest frame, so appending never reallocates and leaves a copy of the PIN behind.
struct PKCS11BridgeWriter {
    private var frame: Bytes

    init() {
        frame = []
        frame.reserveCapacity(4 + PKCS11BridgeFrame.maxBody)
        frame.append(contentsOf: [0, 0, 0, 0])
    }

    mutating func u8(_ value: UInt8) { frame.append(value) }

    mutating func u32(_ value: UInt32) {
        frame.append(contentsOf: [UInt8(value >> 24), UInt8(value >> 16 & 0xff), UInt8(value >> 8 & 0xff), UInt8(value & 0xff)])
    }

    mutating func u64(_ value: UInt64) {
        u32(UInt32(value >> 32))
        u32(UInt32(value & 0xffff_ffff))
    }

    mutating func bytes(_ value: Bytes) {
        u32(UInt32(value.count))
        frame.append(contentsOf: value)
    }

    mutating func template(_ attributes: [PKCS11Attribute]) {
        u32(UInt32(attributes.count))
        for attribute in attributes {
            u64(UInt64(attribute.type))
            bytes(attribute.value)
        }
    }

    /// The frame with its length filled in.
    consuming func framed() -> Bytes {
        let length = UInt32(frame.count - 4)
        frame[0] = UInt8(length >> 24)
        frame[1] = UInt8(length >> 16 & 0xff)
        frame[2] = UInt8(length >> 8 & 0xff)
        frame[3] = UInt8(length & 0xff)
        return frame
    }
}

/// Reads one frame body, field by field, within its bounds.
struct PKCS11BridgeReader {
    private let body: Bytes
    private var offset = 0

    init(_ body: Bytes) { self.body = body }

    mutating func u8() throws(PKCS11BridgeFrameError) -> UInt8 {
        guard offset < body.count else { throw .truncated }
        defer { offset += 1 }
        return body[offset]
    }

    mutating func u32() throws(PKCS11BridgeFrameError) -> UInt32 {
        guard body.count - offset >= 4 else { throw .truncated }
        defer { offset += 4 }
        return body[offset..<offset + 4].reduce(0) { $0 << 8 | UInt32($1) }
    }

    mutating func u64() throws(PKCS11BridgeFrameError) -> UInt64 {
        let high = UInt64(try u32())
        return high << 32 | UInt64(try u32())
    }

    /// A length-prefixed byte string of at most `cap` bytes.
    mutating func bytes(cap: Int = PKCS11BridgeFrame.maxBytes) throws(PKCS11BridgeFrameError) -> Bytes {
        let length = Int(try u32())
        guard length <= cap else { throw .fieldTooLong(length) }
        guard body.count - offset >= length else { throw .truncated }
        defer { offset += length }
        return Array(body[offset..<offset + length])
    }

    /// Throws unless every byte was read.
    func finish() throws(PKCS11BridgeFrameError) {
        guard offset == body.count else { throw .trailingBytes(body.count - offset) }
    }
}
