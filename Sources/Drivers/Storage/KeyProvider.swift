// Where the 256-bit storage key that seals every record comes from.
import Protocol

/// Supplies the storage key. The store asks once when it opens and keeps the key in memory for
/// its lifetime. Implementations must return the same 32 bytes on every start, or every sealed
/// record reads as tampered.
///
/// Room for hardware: a TPM 2.0 provider would keep the key as a sealed object bound to PCRs and
/// unseal it here; a PKCS#11 provider would unwrap it with a token-resident key (CKM_AES_KEY_WRAP)
/// or derive it with a non-extractable HMAC key. Either way the store above is unchanged, and the
/// key file this default uses disappears from the state directory.
public protocol KeyProvider: Sendable {
    /// The 32-byte storage key. Errors are typed and never contain key bytes.
    func storageKey() throws -> Bytes
}
