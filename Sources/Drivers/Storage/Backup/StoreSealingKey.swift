// The key a store copy must open with, for backup and restore: the storage.key file's, or a
// key vault's (issue 18). With a vault the car identity may live in the device instead of a
// sealed row; then the copy proves it belongs to this car by its other identity-kind row (the
// advertising key, written at the first start) opening with the vault's storage key.
import Protocol

struct StoreSealingKey {
    var key: Bytes
    /// What to call the key in messages: the file's path, or "the tpm2 key vault's storage key".
    let keyPath: String
    /// "tpm2" or "pkcs11" when a vault holds the key; nil for the storage.key file.
    let vaultKind: String?
    /// The key ID of the identity inside the device, when there is one.
    let deviceIdentity: KeyID?

    mutating func wipe() { ConstantTime.wipe(&key) }
}
