// The simulated BLE link's framing (docs/protocol.md section 16): each message is a 2-byte
// big-endian length followed by exactly the bytes written to the GATT characteristic.
import Protocol

public enum LinkFrameError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A zero length: protocol messages are never empty.
    case empty
    /// A length above the protocol's 1024-byte message bound.
    case oversized(length: Int, limit: Int)

    public var description: String {
        switch self {
        case .empty: return "empty frame"
        case .oversized(let length, let limit): return "frame of \(length) bytes exceeds \(limit)"
        }
    }
}

public enum LinkFraming {
    public static let headerLength = 2
    /// The largest message a frame may carry: the characteristic's bound.
    public static let maxMessageLength = Wire.maxMessageLength

    /// Length header plus `message`.
    public static func frame(_ message: Bytes) throws(LinkFrameError) -> Bytes {
        try check(length: message.count)
        return [UInt8(message.count >> 8), UInt8(message.count & 0xFF)] + message
    }

    static func check(length: Int) throws(LinkFrameError) {
        guard length > 0 else { throw .empty }
        guard length <= maxMessageLength else { throw .oversized(length: length, limit: maxMessageLength) }
    }
}

/// Cuts a byte stream that arrives in arbitrary pieces into messages. It never holds more than
/// one incomplete frame: complete ones are returned by the `append` that completes them.
public struct LinkFrameAssembler: Sendable {
    private var pending: Bytes = []

    public init() {}

    /// Bytes of an incomplete frame waiting for the rest.
    public var pendingByteCount: Int { pending.count }

    /// Adds received bytes; returns every message they complete, in order. A frame whose
    /// header announces an empty or oversized message throws, and the stream is then unusable
    /// (the caller closes the connection): resynchronising after a bad length is guesswork.
    public mutating func append(_ bytes: Bytes) throws(LinkFrameError) -> [Bytes] {
        pending += bytes
        var messages: [Bytes] = []
        var offset = 0
        while pending.count - offset >= LinkFraming.headerLength {
            let length = Int(pending[offset]) << 8 | Int(pending[offset + 1])
            try LinkFraming.check(length: length)
            let end = offset + LinkFraming.headerLength + length
            guard end <= pending.count else { break }
            messages.append(Array(pending[(offset + LinkFraming.headerLength)..<end]))
            offset = end
        }
        pending.removeFirst(offset)
        return messages
    }
}
