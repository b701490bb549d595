// How the engine finds enrolled keys: the agent's SharedKeychain, or a plain Keychain.

public protocol KeyDirectory: Sendable {
    /// The record for `keyID`, revoked ones included (so the car can say "revoked", not
    /// "unknown"), or nil when the car has never known this key.
    func lookup(_ keyID: KeyID) -> KeyRecord?
}
