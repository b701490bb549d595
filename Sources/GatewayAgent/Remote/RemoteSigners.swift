// The agent's RemoteSignerDirectory: who may sign remote objects, from the keychain (owners;
// shares only with the permissions their certificate granted) and the fleet keys (provisioned
// in the config file, or enrolled/rotated from the cloud and sealed in the store). A revoked
// key, or any key ID the keychain holds a revocation for (that is how an owner retires a fleet
// key), is never a signer; neither is a fleet key retired by a rotation.
import Protocol

final class RemoteSigners: RemoteSignerDirectory {
    /// What a fleet key may do: every remote action, never manage (it cannot revoke or share).
    static let fleetPermissions: Permissions = [.lock, .unlock, .trunk, .remote]

    private let keychain: SharedKeychain
    /// The car's time, for shares with a validity window (rule H3: fail closed when untrusted).
    var now: (() -> (seconds: Int64, trusted: Bool))?
    /// Active fleet keys (agent thread only).
    private var fleet: [KeyID: P256PublicKey] = [:]
    private var retired: Set<KeyID> = []

    init(keychain: SharedKeychain, fleetKeys: [P256PublicKey], stored: [StoredFleetKey] = []) {
        self.keychain = keychain
        for key in fleetKeys { fleet[KeyID(publicKey: key)] = key }
        for entry in stored {
            switch entry.status {
            case .active: fleet[entry.keyID] = entry.key
            case .retired: retired.insert(entry.keyID)
            }
        }
        for id in retired { fleet[id] = nil }
    }

    func remoteSigner(_ keyID: KeyID) -> RemoteSigner? {
        guard !isRevoked(keyID) else { return nil }
        if let record = keychain.lookup(keyID) {
            // A share outside its window (or with a window on an untrusted clock) signs nothing.
            if record.role != .owner, record.hasValidityWindow {
                guard let time = now?(), time.trusted, time.seconds >= Int64(record.notBefore),
                      time.seconds < Int64(record.notAfter) else { return nil }
            }
            return RemoteSigner(keyID: keyID, publicKey: record.publicKey, kind: record.role == .owner ? .owner : .share,
                                permissions: record.permissions)
        }
        if let key = fleet[keyID] {
            return RemoteSigner(keyID: keyID, publicKey: key, kind: .fleet, permissions: Self.fleetPermissions)
        }
        return nil
    }

    func isRevoked(_ keyID: KeyID) -> Bool {
        let snapshot = keychain.snapshot
        return snapshot.isRevoked(.key(keyID)) || snapshot.lookup(keyID)?.revoked == true
    }

    var fleetKeyCount: Int { fleet.count }

    /// After the store committed: the new key is active, a rotated-out one retired.
    func installed(_ key: P256PublicKey, retiring old: KeyID?) {
        let id = KeyID(publicKey: key)
        retired.remove(id)
        fleet[id] = key
        if let old {
            fleet[old] = nil
            retired.insert(old)
        }
    }

    /// The public key of an active fleet key (to store it when it is retired).
    func fleetKey(_ keyID: KeyID) -> P256PublicKey? { fleet[keyID] }
}
