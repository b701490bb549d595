// Rebuilds the keychain from the store's sealed records (kinds key, key-activity, revocation,
// share) in one read transaction. A row that fails authentication is reported by the store as
// a "tamper detected" event and left out; a row that opens but does not decode, or names
// another ID than its own, is left out too. Nothing left out is ever used.
import Drivers
import Protocol

/// A sealed row that was not used, and why.
struct SkippedRecord: Equatable, CustomStringConvertible {
    enum Reason: Equatable {
        /// Failed authentication (edited, truncated, swapped): a tamper event was logged.
        case tampered
        /// Opened, but the payload is not a valid record of its kind.
        case undecodable(String)
    }

    let kind: RecordKind
    let id: Bytes
    let reason: Reason

    var description: String {
        switch reason {
        case .tampered: return "\(kind) \(id.hexString) tampered"
        case .undecodable(let why): return "\(kind) \(id.hexString) unreadable (\(why))"
        }
    }
}

struct LoadedKeychain {
    let keychain: Keychain
    let skipped: [SkippedRecord]
    /// Share certificates kept as evidence (they do not feed the keychain).
    let shareCount: Int
}

enum KeychainLoader {
    static func load(from store: CarStore, capacity: Int = Keychain.defaultCapacity) throws -> LoadedKeychain {
        try store.read { transaction in
            var skipped: [SkippedRecord] = []
            func rows(_ kind: RecordKind) throws -> [SealedRecord] {
                let listing = try transaction.list(kind: kind)
                skipped += listing.tampered.map { SkippedRecord(kind: kind, id: $0, reason: .tampered) }
                return listing.records
            }
            func decode<T>(_ kind: RecordKind, _ row: SealedRecord, id: (T) -> Bytes,
                           _ parse: (Bytes) throws(MessageFormatError) -> T) -> T? {
                do throws(MessageFormatError) {
                    let value = try parse(row.payload)
                    guard id(value) == row.id else {
                        skipped.append(SkippedRecord(kind: kind, id: row.id, reason: .undecodable("payload names another ID")))
                        return nil
                    }
                    return value
                } catch {
                    skipped.append(SkippedRecord(kind: kind, id: row.id, reason: .undecodable("\(error)")))
                    return nil
                }
            }
            let records = try rows(.key).compactMap { row in
                decode(.key, row, id: { $0.keyID.bytes }) { (bytes) throws(MessageFormatError) in try KeyRecord(storedBytes: bytes) }
            }
            let activities = try rows(.keyActivity).compactMap { row in
                decode(.keyActivity, row, id: { $0.keyID.bytes }) { (bytes) throws(MessageFormatError) in try KeyActivity(storedBytes: bytes) }
            }
            let revocations = try rows(.revocation).compactMap { row in
                decode(.revocation, row, id: { $0.target.storageID }) { (bytes) throws(MessageFormatError) in
                    try RevocationEntry(storedBytes: bytes)
                }
            }
            let shares = try rows(.share).count
            return LoadedKeychain(keychain: Keychain(capacity: capacity, records: records, activities: activities,
                                                     revocations: revocations),
                                  skipped: skipped, shareCount: shares)
        }
    }
}
