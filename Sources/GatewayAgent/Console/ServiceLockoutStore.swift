// Where the service PIN's guess count lives between restarts: one sealed row in the store
// (kind `service-auth`, ID 0x01). Payload (14 bytes): tag 0x53 ('S'), format 0x01, failures
// (UInt32 BE), lockout end (Int64 BE, wall-clock seconds, 0: none). A row that fails
// authentication or does not parse reads as "locked out for the longest time"
// (ServicePINLockout.unreadable): deleting or editing it is no way around the limit.
import Drivers
import Protocol

enum ServiceLockoutStore {
    static let kind = RecordKind(rawValue: "service-auth")!
    static let id: Bytes = [0x01]

    enum Loaded: Equatable {
        case state(ServicePINLockout.Persisted)
        case unreadable(String)
    }

    static func encode(_ state: ServicePINLockout.Persisted) -> Bytes {
        let until = UInt64(bitPattern: state.lockedUntilWallSeconds)
        return [0x53, 0x01] + (0..<4).map { UInt8(truncatingIfNeeded: state.failures >> (24 - 8 * $0)) }
            + (0..<8).map { UInt8(truncatingIfNeeded: until >> (56 - 8 * UInt64($0))) }
    }

    static func decode(_ bytes: Bytes) -> ServicePINLockout.Persisted? {
        guard bytes.count == 14, bytes[0] == 0x53, bytes[1] == 0x01 else { return nil }
        let failures = bytes[2..<6].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        let until = bytes[6..<14].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        return ServicePINLockout.Persisted(failures: failures, lockedUntilWallSeconds: Int64(bitPattern: until))
    }

    static func load(_ store: CarStore) -> Loaded {
        do {
            guard let bytes = try store.get(kind: kind, id: id) else { return .state(.clear) }
            guard let state = decode(bytes) else { return .unreadable("row does not parse (\(bytes.count) bytes)") }
            return .state(state)
        } catch {
            return .unreadable("\(error)")
        }
    }

    /// Durable before it returns (its own committed transaction).
    static func save(_ state: ServicePINLockout.Persisted, in store: CarStore) throws(StorageError) {
        try store.put(encode(state), kind: kind, id: id)
    }
}
