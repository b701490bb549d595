// How the engine finds enrolled keys. The keys issue adds a persistent, sealed implementation;
// the in-memory one serves tests, the simulator and the benchmark.
import Synchronization

public protocol KeyDirectory: Sendable {
    /// The record for `keyID`, revoked ones included (so the car can say "revoked", not
    /// "unknown"), or nil when the car has never known this key.
    func lookup(_ keyID: KeyID) -> KeyRecord?
}

/// A thread-safe dictionary of key records.
public final class InMemoryKeyDirectory: KeyDirectory {
    private let records: Mutex<[KeyID: KeyRecord]>

    public init(_ initial: [KeyRecord] = []) {
        records = Mutex(Dictionary(initial.map { ($0.keyID, $0) }, uniquingKeysWith: { _, last in last }))
    }

    public func lookup(_ keyID: KeyID) -> KeyRecord? { records.withLock { $0[keyID] } }

    public func upsert(_ record: KeyRecord) { records.withLock { $0[record.keyID] = record } }

    /// Marks a key revoked (kept, so it can be reported as revoked rather than unknown). Open
    /// sessions are ended separately with `CarProtocolEngine.terminateSessions(of:)`.
    public func revoke(_ keyID: KeyID) { records.withLock { $0[keyID]?.revoked = true } }

    public func remove(_ keyID: KeyID) { records.withLock { _ = $0.removeValue(forKey: keyID) } }

    public var all: [KeyRecord] { records.withLock { Array($0.values) } }
}
