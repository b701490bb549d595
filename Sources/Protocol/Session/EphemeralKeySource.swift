// Where per-handshake ephemeral keys come from: the system CSPRNG in production, a fixed list
// in known-answer tests and deterministic simulations.
import Synchronization

public protocol EphemeralKeySource: Sendable {
    func makeEphemeralKey() throws -> P256PrivateKey
}

/// Fresh keys from OpenSSL for every handshake (forward secrecy depends on this).
public struct SystemEphemeralKeySource: EphemeralKeySource {
    public init() {}
    public func makeEphemeralKey() throws -> P256PrivateKey { try P256PrivateKey.generate() }
}

public enum EphemeralKeySourceError: Error, Equatable, Sendable {
    case exhausted
}

/// Hands out the given keys in order, then fails. Never use outside tests and simulations:
/// reusing an ephemeral key across handshakes removes forward secrecy.
public final class FixedEphemeralKeySource: EphemeralKeySource {
    private let queue: Mutex<[P256PrivateKey]>

    public init(_ keys: [P256PrivateKey]) { queue = Mutex(keys) }

    public func makeEphemeralKey() throws -> P256PrivateKey {
        let next: P256PrivateKey? = queue.withLock { keys in keys.isEmpty ? nil : keys.removeFirst() }
        guard let next else { throw EphemeralKeySourceError.exhausted }
        return next
    }
}
