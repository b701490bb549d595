// What a revocation names: one share (by serial) or one key (by key ID).

public enum RevocationTarget: Hashable, Sendable, CustomStringConvertible {
    case serial(ShareSerial)
    case key(KeyID)

    /// Wire value of targetKind.
    public var kind: UInt8 {
        switch self {
        case .serial: return 0x01
        case .key: return 0x02
        }
    }

    /// The 8 bytes after targetKind.
    public var value: Bytes {
        switch self {
        case .serial(let serial): return serial.bytes
        case .key(let keyID): return keyID.bytes
        }
    }

    /// kind || value (9 bytes): a stable ID for the store's revocation rows.
    public var storageID: Bytes { [kind] + value }

    init(kind: UInt8, value: Bytes) throws(MessageFormatError) {
        switch kind {
        case 0x01: self = .serial(try ShareSerial(bytes: value))
        case 0x02: self = .key(try KeyID(bytes: value))
        default: throw .invalidField(field: "targetKind", reason: "must be 1 (serial) or 2 (key ID), got \(kind)")
        }
    }

    public var description: String {
        switch self {
        case .serial(let serial): return "serial \(serial)"
        case .key(let keyID): return "key \(keyID)"
        }
    }
}
