// What a device vault leaves in the state directory (issue 18): the TPM's sealed storage key
// blob, the token-wrapped storage key. Seen without a vault configured, they mean the config
// lost its "vault" object: the start names that instead of "storage key lost".
#if canImport(Glibc)
import Glibc
#endif

enum VaultFiles {
    /// Marker file per provider (TPM2KeyVault's tpm2-storage.*, PKCS11StorageWrap's file).
    static let markers: [(kind: String, file: String)] = [("tpm2", "tpm2-storage.pub"), ("pkcs11", "pkcs11-storage.key")]

    /// Every file a provider keeps in the state directory, for messages and backups.
    static func names(_ kind: String) -> String {
        switch kind {
        case "tpm2": return "tpm2-storage.pub, tpm2-storage.priv and, with a device identity, tpm2-identity.pub and tpm2-identity.priv"
        case "pkcs11": return "pkcs11-storage.key"
        default: return "none"
        }
    }

    /// The provider whose storage key is in `directory`, if any.
    static func deviceSealing(_ directory: String) -> String? {
        markers.first { access(directory + "/" + $0.file, F_OK) == 0 }?.kind
    }
}
