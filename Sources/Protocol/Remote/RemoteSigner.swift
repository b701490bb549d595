// Who may sign what reaches the car over the cloud (remote commands, configuration documents,
// revocation lists). The broker and the back end's network are not trusted: every such object
// carries a signature by a key the car already knows, and the car asks this directory.

/// A key allowed to sign remote objects, as the car knows it now.
public struct RemoteSigner: Sendable, Equatable {
    public enum Kind: String, Sendable, Equatable {
        /// An enrolled owner key (its permissions say whether it may act remotely).
        case owner
        /// A fleet operator's key, installed at provisioning or enrolled by an owner.
        case fleet
        /// A share holder's key: only with the permissions its certificate grants.
        case share
    }

    public let keyID: KeyID
    public let publicKey: P256PublicKey
    public let kind: Kind
    public let permissions: Permissions

    public init(keyID: KeyID, publicKey: P256PublicKey, kind: Kind, permissions: Permissions) {
        self.keyID = keyID
        self.publicKey = publicKey
        self.kind = kind
        self.permissions = permissions
    }
}

public protocol RemoteSignerDirectory {
    /// `keyID`'s signer record if it is known and not revoked now; nil otherwise.
    func remoteSigner(_ keyID: KeyID) -> RemoteSigner?
}
