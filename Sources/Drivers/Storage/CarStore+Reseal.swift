// The vault migration's one store operation (issue 18): every sealed record opened with the
// storage key this store was opened with and sealed again under another, in one transaction.
// Events, the audit chain and counters are not sealed and stay as they are.
import Protocol

extension CarStore {
    /// What `resealAll` did.
    public struct ResealSummary: Equatable, Sendable {
        /// Records sealed again under the new key.
        public let resealed: Int
        /// Whether the identity row was deleted (the car's identity moves into the device).
        public let identityRemoved: Bool
    }

    /// Seals every record again under `newKey`, all in one transaction: a record that does not
    /// open (tampered, or a kind this code does not know) stops it with nothing changed.
    /// `removeIdentity` deletes the identity row instead of re-sealing it. Afterwards this
    /// store still holds the old key: close it and open the store again with the new one.
    /// A `storage` event ("vault migrate", to `vaultKind`) is appended in the same transaction.
    public func resealAll(under newKey: Bytes, removeIdentity: Bool, vaultKind: String) throws(StorageError) -> ResealSummary { try StorageError.wrap {
            let target = try RecordSealer(key: newKey)
            return try write { transaction in
                var rows = [(kind: String, id: Bytes)]()
                let statement = try transaction.connection.prepare("SELECT kind, id FROM sealed_records ORDER BY kind, id")
                while try statement.step() {
                    guard case .text(let kind) = statement.value(0) else { throw StorageError.invalidArgument("sealed record with a non-text kind") }
                    rows.append((kind, statement.blob(1) ?? []))
                }
                var resealed = 0
                var identityRemoved = false
                for row in rows {
                    guard let kind = RecordKind(rawValue: row.kind) else {
                        throw StorageError.invalidArgument("sealed record of unknown kind '\(row.kind)': this store is newer than this tool")
                    }
                    if removeIdentity, kind == .identity, row.id == Self.identityRecordID {
                        try transaction.delete(kind: kind, id: row.id)
                        identityRemoved = true
                        continue
                    }
                    guard var payload = try transaction.get(kind: kind, id: row.id) else { continue }
                    defer { ConstantTime.wipe(&payload) }
                    let sealed = try target.seal(payload, kind: kind, id: row.id, random: transaction.randomSource)
                    try transaction.connection.run("UPDATE sealed_records SET sealed = ?1 WHERE kind = ?2 AND id = ?3",
                                                   [.blob(sealed), .text(row.kind), .blob(row.id)])
                    resealed += 1
                }
                try transaction.appendEvent(storageEvent(action: .vaultMigrate, detail: [
                    ("to", vaultKind), ("resealed", String(resealed)), ("identity", identityRemoved ? "new, in the device" : "kept"),
                ]))
                return ResealSummary(resealed: resealed, identityRemoved: identityRemoved)
            }
        }
    }
}
