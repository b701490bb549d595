// Fleet keys enrolled or rotated from the cloud, sealed in the store like the phone keys
// (kind `fleet-key`, ID = key ID). Payload (68 bytes): tag 0x46 ('F'), format 0x01, status
// (1 active, 2 retired), the SEC1 public key. A retired row also retires a key of the same ID
// provisioned in the config file, so a rotation survives restarts whatever the file says.
import Drivers
import Protocol

struct StoredFleetKey: Equatable {
    enum Status: UInt8 { case active = 1, retired = 2 }
    let key: P256PublicKey
    let status: Status

    static func == (lhs: StoredFleetKey, rhs: StoredFleetKey) -> Bool { lhs.key.sec1 == rhs.key.sec1 && lhs.status == rhs.status }

    var keyID: KeyID { KeyID(publicKey: key) }

    var storedBytes: Bytes { [0x46, 0x01, status.rawValue] + key.sec1 }

    init(key: P256PublicKey, status: Status) {
        self.key = key
        self.status = status
    }

    init?(stored bytes: Bytes) {
        guard bytes.count == 68, bytes[0] == 0x46, bytes[1] == 0x01, let status = Status(rawValue: bytes[2]),
              let key = try? P256PublicKey(sec1: Array(bytes[3...])) else { return nil }
        self.init(key: key, status: status)
    }
}

enum FleetKeyStore {
    static let kind = RecordKind(rawValue: "fleet-key")!
    /// Enrolled fleet keys a car keeps active at once.
    static let capacity = 8

    /// Every readable row (tampered ones are reported by the store and left out).
    static func load(_ store: CarStore) throws -> [StoredFleetKey] {
        try store.list(kind: kind).records.compactMap { StoredFleetKey(stored: $0.payload) }
    }

    static func put(_ entry: StoredFleetKey, in transaction: StoreTransaction) throws {
        try transaction.put(entry.storedBytes, kind: kind, id: entry.keyID.bytes)
    }
}
