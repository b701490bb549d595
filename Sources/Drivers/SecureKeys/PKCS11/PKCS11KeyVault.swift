// The PKCS#11 key vault (config kind "pkcs11"): identity and storage-wrap keys on a token
// reached through any PKCS#11 module (SoftHSM2 in tests, tpm2-pkcs11 or a secure element's
// module on boards).
import Protocol

public final class PKCS11KeyVault: CarKeyVault, @unchecked Sendable {
    // @unchecked Sendable: `identity` changes only under `identityLock`; the token serialises
    // its own calls.
    public let kind = "pkcs11"
    /// Internal, not private: tests count the objects on the token through it.
    let token: PKCS11Token
    private let storage: PKCS11StorageWrap
    private let identityLock = Lock()
    private var identity: PKCS11IdentityKey?

    /// Opens the token labelled `tokenLabel` through the module at `modulePath` and logs in with
    /// `pin` (the caller reads it from its 0600 file; it is used for C_Login only, never kept
    /// or printed). `stateDirectory` holds the wrapped storage key. The module is loaded by
    /// carkey-pkcs11-bridge (`bridge`, or found beside the executable or in
    /// /usr/libexec/opencarkey); `reloadPIN` reads the PIN again when a bridge that died is
    /// restarted (nil: a dead bridge stays an error until the vault is reopened).
    public init(modulePath: String, tokenLabel: String, pin: Bytes, stateDirectory: String,
                random: RandomSource = SystemRandom(), bridge: String? = nil,
                reloadPIN: (() throws(SecureKeyError) -> Bytes)? = nil) throws(SecureKeyError) {
        token = try PKCS11Token(modulePath: modulePath, label: tokenLabel, pin: pin, bridge: bridge, reloadPIN: reloadPIN)
        let directory = stateDirectory.hasSuffix("/") ? String(stateDirectory.dropLast()) : stateDirectory
        storage = PKCS11StorageWrap(token: token, path: directory + "/" + PKCS11StorageWrap.fileName, random: random)
    }

    /// Where the wrapped storage key lives.
    public var storageKeyPath: String { storage.path }

    public var summary: String {
        "PKCS#11 module \(token.modulePath), token \(token.label) (\(token.manufacturer), \(token.model)), "
            + "identity and storage-wrap keys on the token, loaded by \(token.bridgeExecutable)"
    }

    public func storageKey() throws(SecureKeyError) -> Bytes {
        try storage.storageKey()
    }

    public func deviceIdentity(create: Bool) throws(SecureKeyError) -> (any ProtocolKeyAgreement)? {
        try identityLock.withLock { () throws(SecureKeyError) -> (any ProtocolKeyAgreement)? in
            if let identity { return identity }
            identity = try PKCS11IdentityKey.load(on: token, create: create)
            return identity
        }
    }

    /// Called with one line when the bridge dies and one when a restarted bridge is logged in
    /// again; never once per refused call. The agent logs them.
    public func onConnectionChange(_ report: @escaping @Sendable (String) -> Void) {
        token.setReport(report)
    }

    /// Ends the session and releases the module (C_Finalize when no other vault uses it).
    /// Keys handed out earlier fail from then on. Without it, the session closes when the vault
    /// and every key it handed out are gone.
    public func close() {
        token.close()
    }
}
