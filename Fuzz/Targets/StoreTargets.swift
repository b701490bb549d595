// The store's own sealer (Drivers' RecordSealer, package access), as a row read back from the
// SQLite file meets it: the kind and ID come from the row, the blob from its payload column,
// and the key is fixed so a seeded blob opens. Input: byte 0 picks the kind, byte 1 is the ID's
// length, then the ID, then the blob (an ID of length 0 is one the store never writes).
import Drivers
import Protocol

enum StoreTargets {
    static let kinds: [RecordKind] = [.key, .share, .revocation, .keyActivity, .identity]

    /// The pieces of a record-sealer input, or nil when the input ends inside the ID.
    struct Row {
        let kind: RecordKind
        let id: Bytes
        let blob: Bytes

        init?(_ input: Bytes) {
            guard input.count >= 2, input.count >= 2 + Int(input[1]) else { return nil }
            kind = StoreTargets.kinds[Int(input[0]) % StoreTargets.kinds.count]
            id = Array(input[2..<(2 + Int(input[1]))])
            blob = Array(input[(2 + Int(input[1]))...])
        }

        /// The input that encodes a row (the seed generator writes these).
        static func encode(kindIndex: Int, id: Bytes, blob: Bytes) -> Bytes {
            [UInt8(kindIndex), UInt8(id.count)] + id + blob
        }
    }

    /// Nonces for the fuzzer's own seals: fixed, so an input replays identically. (A nonce used
    /// twice under one key is harmless here: the key exists only in the fuzz target.)
    struct FixedNonces: RandomSource {
        func randomBytes(_ count: Int) throws -> Bytes { Bytes(repeating: 0x5A, count: count) }
    }

    static let sealer = try! RecordSealer(key: StoreKey.fixed)

    /// open's outcome: the payload, or nil for the one refusal it may give (`tampered`, naming
    /// the row's own kind and ID). Any other error, or a tampered error naming another row, is
    /// a violation: a caller must be able to tell the row from the message.
    static func open(_ blob: Bytes, kind: RecordKind, id: Bytes) throws(PropertyViolation) -> Bytes? {
        do {
            return try sealer.open(blob, kind: kind, id: id)
        } catch let error as StorageError {
            guard case .tampered(let k, let i) = error, k == kind, i == id else {
                throw PropertyViolation(property: "open refuses only as tampered(kind, id) of its own row, not \(error)")
            }
            return nil
        } catch {
            throw PropertyViolation(property: "open threw a non-storage error: \(error)")
        }
    }

    static let all: [FuzzTarget] = [
        FuzzTarget("record-sealer", "RecordSealer.open (the store's sealer, fixed key) on (kind, ID, blob): refuses only as tampered(kind, ID); an opened blob is combined - overhead bytes, opens under no other kind or ID and not with a bit flipped, and seal(open(b)) opens to the same payload at the same length; a payload that does not open seals and opens back (decode(encode(x)) == x)") { input throws(PropertyViolation) in
            guard let row = Row(input) else { return false }
            let validID = (1...RecordSealer.maximumIDLength).contains(row.id.count)
            guard let payload = try open(row.blob, kind: row.kind, id: row.id) else {
                // Not a seal under this key: as the plaintext of a new row instead.
                guard validID, !row.blob.isEmpty, let sealed = try? sealer.seal(row.blob, kind: row.kind, id: row.id, random: FixedNonces()) else {
                    return false
                }
                try require(sealed.count == row.blob.count + SealedBox.overhead, "sealed length = payload + overhead")
                try require(try open(sealed, kind: row.kind, id: row.id) == row.blob, "open(seal(p)) == p")
                let other = kinds[(kinds.firstIndex(of: row.kind)! + 1) % kinds.count]
                try require(try open(sealed, kind: other, id: row.id) == nil, "a seal opens under its own kind only")
                return false
            }
            try require(validID, "an ID the store never writes opened a blob")
            try require(payload.count + SealedBox.overhead == row.blob.count, "plaintext length = combined - overhead")
            for other in kinds where other != row.kind {
                try require(try open(row.blob, kind: other, id: row.id) == nil, "blob of \(row.kind) opened as \(other)")
            }
            var otherID = row.id
            otherID[otherID.count - 1] ^= 0x01
            try require(try open(row.blob, kind: row.kind, id: otherID) == nil, "blob opened under another ID")
            try require(try open(row.blob, kind: row.kind, id: row.id + [0]) == nil, "blob opened under a longer ID")
            var forged = row.blob
            forged[Int(input[0]) % forged.count] ^= 0x80
            try require(try open(forged, kind: row.kind, id: row.id) == nil, "a flipped bit opened")
            try require(try open(Array(row.blob.dropLast()), kind: row.kind, id: row.id) == nil, "a truncated blob opened")
            if !payload.isEmpty {
                let resealed = try? sealer.seal(payload, kind: row.kind, id: row.id, random: FixedNonces())
                try require(resealed?.count == row.blob.count, "re-seal keeps the length")
                try require(resealed.flatMap { try? open($0, kind: row.kind, id: row.id) } == payload, "re-seal opens to the payload")
            }
            return true
        },
    ]

    /// Seeds: a blob sealed by the store's sealer for every kind (`carkey-fuzz seed-documents`).
    static func seeds() -> [Bytes] {
        var out: [Bytes] = []
        let payloads: [Bytes] = [[0x4B, 0x01] + Bytes(repeating: 0, count: 92), [0x41, 0x01] + Bytes(repeating: 0, count: 21), [0x01]]
        for index in kinds.indices {
            let id = Bytes(1...8)
            guard let sealed = try? sealer.seal(payloads[index % payloads.count], kind: kinds[index], id: id) else { continue }
            out.append(Row.encode(kindIndex: index, id: id, blob: sealed))
        }
        if let sealed = try? sealer.seal([0x49], kind: .identity, id: Bytes(repeating: 0x69, count: 255)) {
            out.append(Row.encode(kindIndex: 4, id: Bytes(repeating: 0x69, count: 255), blob: sealed))
        }
        return out
    }
}
