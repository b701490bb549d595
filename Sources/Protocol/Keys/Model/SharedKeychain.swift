// A Keychain behind a lock, for the agent: the engine reads it as its KeyDirectory and asks it
// to verify share certificates; the agent changes it with `update` and persists the changes.
import Synchronization

public final class SharedKeychain: KeyDirectory, ShareCertificateVerifier {
    private let state: Mutex<Keychain>
    public let policy: ShareCertificatePolicy

    public init(_ keychain: Keychain, policy: ShareCertificatePolicy = .init()) {
        state = Mutex(keychain)
        self.policy = policy
    }

    /// A copy of the current state.
    public var snapshot: Keychain { state.withLock { $0 } }

    public func lookup(_ keyID: KeyID) -> KeyRecord? { state.withLock { $0.lookup(keyID) } }

    public func verify(certificate: Bytes, keyID: KeyID, vehicleID: VehicleID, now: ProtocolTime) throws(FaultCode) -> KeyRecord {
        try ShareCertificateValidator.verify(certificate, keyID: keyID, vehicleID: vehicleID, now: now,
                                             keychain: snapshot, policy: policy)
    }

    /// Runs one change under the lock. Persist the returned changes inside `body` (before it
    /// returns) when the store must never lag the memory, or right after.
    public func update<T: Sendable>(_ body: (inout Keychain) throws(FaultCode) -> T) throws(FaultCode) -> T {
        try state.withLock { (keychain: inout Keychain) throws(FaultCode) -> T in try body(&keychain) }
    }

    /// Replaces the whole state (the agent reloaded from the store).
    public func replace(with keychain: Keychain) { state.withLock { $0 = keychain } }
}
