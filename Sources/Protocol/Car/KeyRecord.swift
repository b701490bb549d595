// What the car knows about one phone key. The agent stores these sealed on disk (stable
// binary form in Keys/Storage/KeyRecord+Stored.swift); here they are plain values handed to
// the engine by a KeyDirectory.

public struct KeyRecord: Sendable, Equatable {
    /// No validity window on this side.
    public static let noNotBefore: UInt32 = 0
    public static let noNotAfter: UInt32 = .max

    public let publicKey: P256PublicKey
    public var role: KeyRole
    public var permissions: Permissions
    /// Seconds since 1970; 0 = no lower bound.
    public var notBefore: UInt32
    /// Seconds since 1970; UInt32.max = no upper bound.
    public var notAfter: UInt32
    public var revoked: Bool
    /// For a key installed from a share certificate: its serial and issuing owner, so a
    /// revocation by serial (or of the issuer) finds it. Nil for owner keys.
    public var share: ShareProvenance?

    public init(publicKey: P256PublicKey, role: KeyRole, permissions: Permissions,
                notBefore: UInt32 = KeyRecord.noNotBefore, notAfter: UInt32 = KeyRecord.noNotAfter,
                revoked: Bool = false, share: ShareProvenance? = nil) {
        self.publicKey = publicKey
        self.role = role
        self.permissions = permissions
        self.notBefore = notBefore
        self.notAfter = notAfter
        self.revoked = revoked
        self.share = share
    }

    public var keyID: KeyID { KeyID(publicKey: publicKey) }

    /// A window needs trusted wall time to check; keys without one work on an untrusted clock.
    public var hasValidityWindow: Bool {
        notBefore != KeyRecord.noNotBefore || notAfter != KeyRecord.noNotAfter
    }
}
