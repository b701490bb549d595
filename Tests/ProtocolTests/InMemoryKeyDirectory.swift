// A key directory the tests can change under a running engine (enrol, revoke, remove).
import Synchronization
@testable import Protocol

/// A thread-safe dictionary of key records.
final class InMemoryKeyDirectory: KeyDirectory {
    private let records: Mutex<[KeyID: KeyRecord]>

    init(_ initial: [KeyRecord] = []) {
        records = Mutex(Dictionary(initial.map { ($0.keyID, $0) }, uniquingKeysWith: { _, last in last }))
    }

    func lookup(_ keyID: KeyID) -> KeyRecord? { records.withLock { $0[keyID] } }

    func upsert(_ record: KeyRecord) { records.withLock { $0[record.keyID] = record } }

    /// Marks a key revoked (kept, so it can be reported as revoked rather than unknown). Open
    /// sessions are ended separately with `CarProtocolEngine.terminateSessions(of:)`.
    func revoke(_ keyID: KeyID) { records.withLock { $0[keyID]?.revoked = true } }

    func remove(_ keyID: KeyID) { records.withLock { _ = $0.removeValue(forKey: keyID) } }

    var all: [KeyRecord] { records.withLock { Array($0.values) } }
}
