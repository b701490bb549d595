// Where the car keeps its two secrets (issue 18): the storage key that seals every record in
// the store, and the identity key that signs every Challenge (and does the advertising-key
// grant's static ECDH, protocol.md 18.12). The file vault keeps both on the SD card; a TPM 2.0
// or a PKCS#11 token keeps them where imaging the card cannot copy them.
// The interface lives with Storage, its user (like KeyProvider); SecureKeys implements it, so
// the dependency runs one way only (FolderDependencyTests).
import Protocol

/// A key vault: the storage key (KeyProvider) and, where the device holds one, the identity.
public protocol CarKeyVault: KeyProvider {
    /// "file", "tpm2" or "pkcs11": what the config names and start-up prints.
    var kind: String { get }
    /// One line for start-up output: the device and where its objects live (handles, labels,
    /// blob files). Never key material, never a PIN.
    var summary: String { get }
    /// The identity key held inside the device (non-exportable: signing and ECDH happen in the
    /// device), created there on first use when `create` is true. nil when no device identity
    /// exists and `create` is false (a car migrated from the file vault keeps its sealed
    /// identity record until the operator asks for a new one).
    func deviceIdentity(create: Bool) throws(SecureKeyError) -> (any ProtocolKeyAgreement)?
    /// Ends the use of the device on a clean stop (transient objects flushed, sessions closed,
    /// a TPM told to expect the power cut); identity keys handed out stop working.
    func close()
}

extension CarKeyVault {
    /// Nothing to end for a vault that holds no device connection (test doubles).
    public func close() {}
}

/// What can go wrong with a key device. Each case says what to fix; none carries key bytes
/// or a PIN.
public enum SecureKeyError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The device or its library is not there (no /dev/tpmrm0, module path missing, library not
    /// installed); `fix` names what to install or configure.
    case deviceMissing(device: String, fix: String)
    /// The token is there but refuses us: wrong PIN / auth value, or locked.
    case locked(device: String, fix: String)
    /// A stored object (key blob, sealed storage key) does not load on this device: another
    /// board's TPM, a re-initialised token, or PCR values that changed.
    case foreignObject(what: String, fix: String)
    /// The device answered an operation with an error code.
    case operationFailed(operation: String, code: UInt64, detail: String)
    /// A stored file or attribute is malformed.
    case malformed(what: String)

    public var description: String {
        switch self {
        case .deviceMissing(let device, let fix): return "\(device) not available: \(fix)"
        case .locked(let device, let fix): return "\(device) refused access: \(fix)"
        case .foreignObject(let what, let fix): return "\(what) does not belong to this device: \(fix)"
        case .operationFailed(let operation, let code, let detail):
            return "\(operation) failed (0x\(String(code, radix: 16))): \(detail)"
        case .malformed(let what): return "malformed \(what)"
        }
    }
}
