// Seals record payloads with AES-256-GCM under the storage key. The associated data binds the
// kind and the record ID, so a blob only opens in the row it was written for: an edited,
// truncated or swapped row fails authentication the same way as a wrong key.
//
// Package access: the `record-sealer` fuzz target (Fuzz/Targets) opens blobs with this very
// type, not a copy of its format; nothing outside the package sees it.
import Protocol

package struct RecordSealer: Sendable {
    /// Record IDs are key IDs, serials and the like: short, non-empty, at most 255 bytes so a
    /// one-byte length prefix keeps the associated data unambiguous.
    package static let maximumIDLength = 255
    /// Versioned domain label, so these seals can never be confused with another use of the key.
    private static let domain = Bytes("opencarkey/sealed-record/v1".utf8)

    private let key: Bytes

    package init(key: Bytes) throws {
        guard key.count == 32 else { throw StorageError.invalidStorageKeyLength(key.count) }
        self.key = key
    }

    package func seal(_ payload: Bytes, kind: RecordKind, id: Bytes, random: RandomSource = SystemRandom()) throws -> Bytes {
        try Self.validate(id: id)
        guard !payload.isEmpty else { throw StorageError.invalidArgument("empty payload for \(kind) record") }
        return try SealedBox(sealing: payload, key: key, authenticating: Self.associatedData(kind: kind, id: id), random: random).combined
    }

    /// The payload, or `.tampered` for anything that does not authenticate (including a blob
    /// too short to be a sealed box); no partial plaintext is ever returned.
    package func open(_ sealed: Bytes, kind: RecordKind, id: Bytes) throws -> Bytes {
        // The ID comes from the file; one of impossible length is tampering, not a caller error.
        guard (1...Self.maximumIDLength).contains(id.count) else { throw StorageError.tampered(kind: kind, id: id) }
        do {
            return try SealedBox(combined: sealed).open(key: key, authenticating: Self.associatedData(kind: kind, id: id))
        } catch is CryptoError {
            throw StorageError.tampered(kind: kind, id: id)
        }
    }

    static func validate(id: Bytes) throws {
        guard (1...maximumIDLength).contains(id.count) else {
            throw StorageError.invalidArgument("record ID must be 1 to \(maximumIDLength) bytes, got \(id.count)")
        }
    }

    /// domain || 0x00 || len(kind) || kind || len(id) || id, every length one byte.
    static func associatedData(kind: RecordKind, id: Bytes) -> Bytes {
        let kindBytes = Bytes(kind.rawValue.utf8)
        return domain + [0, UInt8(kindBytes.count)] + kindBytes + [UInt8(id.count)] + id
    }
}
