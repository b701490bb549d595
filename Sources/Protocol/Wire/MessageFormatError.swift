// Why bytes are not a valid message. Each case maps to exactly one fault code on the wire.

/// A message that cannot be decoded, or field values that cannot be encoded. Carries the field
/// name for diagnostics (`carkey decode`), never secret material.
public enum MessageFormatError: Error, Equatable, Sendable, CustomStringConvertible {
    case empty
    case oversized(length: Int, limit: Int)
    case truncated(field: String, needed: Int, available: Int)
    case trailingBytes(count: Int)
    case unknownMessageType(UInt8)
    case unsupportedVersion(UInt8)
    case invalidField(field: String, reason: String)

    /// The fault the car reports for this error.
    public var fault: FaultCode {
        if case .unsupportedVersion = self { return .unsupportedVersion }
        return .malformedMessage
    }

    public var description: String {
        switch self {
        case .empty: return "empty message"
        case .oversized(let length, let limit): return "message of \(length) bytes exceeds \(limit)"
        case .truncated(let field, let needed, let available):
            return "truncated at \(field): need \(needed) bytes, \(available) left"
        case .trailingBytes(let count): return "\(count) unexpected trailing bytes"
        case .unknownMessageType(let type): return "unknown message type 0x\([type].hexString)"
        case .unsupportedVersion(let version): return "unsupported protocol version \(version)"
        case .invalidField(let field, let reason): return "invalid \(field): \(reason)"
        }
    }
}
