// What the car remembers about configuration documents, as one sealed record in its store (so
// an edit of the database is detected like any other tampering):
//   handled version (UInt64 BE) || digest of that document (32) || version in force (UInt64 BE)
// "Handled" is the newest authentic, unexpired document, whatever its outcome: the next one
// must be newer (rollback protection), and a re-delivery of the same retained document (on
// every reconnect) is recognised by its digest and ignored.
import Drivers
import Protocol

struct ConfigVersionRecord: Equatable, Sendable {
    static let kind = RecordKind(rawValue: "config-version")!
    static let id: Bytes = [0x01]

    var handledVersion: UInt64 = 0
    var handledDigest: Bytes = Bytes(repeating: 0, count: 32)
    /// 0: the local file, never changed from the cloud.
    var inForceVersion: UInt64 = 0

    var encoded: Bytes {
        var out = Bytes()
        out += Self.bigEndian(handledVersion)
        out += handledDigest
        out += Self.bigEndian(inForceVersion)
        return out
    }

    init() {}

    init?(_ bytes: Bytes) {
        guard bytes.count == 48 else { return nil }
        handledVersion = bytes[0..<8].reduce(0) { $0 << 8 | UInt64($1) }
        handledDigest = Array(bytes[8..<40])
        inForceVersion = bytes[40..<48].reduce(0) { $0 << 8 | UInt64($1) }
    }

    static func load(_ transaction: StoreTransaction) throws -> ConfigVersionRecord {
        guard let bytes = try transaction.get(kind: kind, id: id) else { return ConfigVersionRecord() }
        guard let record = ConfigVersionRecord(bytes) else { throw StorageError.invalidArgument("config version record of \(bytes.count) bytes") }
        return record
    }

    func save(_ transaction: StoreTransaction) throws {
        try transaction.put(encoded, kind: Self.kind, id: Self.id)
    }

    private static func bigEndian(_ value: UInt64) -> Bytes {
        stride(from: 56, through: 0, by: -8).map { UInt8(truncatingIfNeeded: value >> UInt64($0)) }
    }
}
