// Why a configuration document was refused before its content was looked at. Each case has a
// stable name (the reported document and the event use it) and the nearest protocol fault.

public enum SignedConfigError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Not a well-formed document (names the field), or another format version.
    case malformed(MessageFormatError)
    case wrongVehicle
    /// The signer is not known to the car now (never enrolled, or revoked).
    case unknownSigner
    /// A known key that may not configure the car: a share, or an owner key without `manage`.
    case insufficientPermission
    case badSignature
    /// Expiry cannot be checked without trusted time; applying anyway would defeat it.
    case clockNotTrusted
    case notYetValid
    case expired
    case lifetimeTooLong
    /// Older than or equal to the newest document already handled (rollback protection).
    case notNewer(version: UInt64, current: UInt64)

    public var name: String {
        switch self {
        case .malformed(let error): return error.fault.name
        case .wrongVehicle: return "wrongVehicle"
        case .unknownSigner: return "unknownSigner"
        case .insufficientPermission: return "insufficientPermission"
        case .badSignature: return "badSignature"
        case .clockNotTrusted: return "clockNotTrusted"
        case .notYetValid: return "notYetValid"
        case .expired: return "expired"
        case .lifetimeTooLong: return "lifetimeTooLong"
        case .notNewer: return "versionNotNewer"
        }
    }

    /// The protocol fault closest to the refusal (its number goes into events).
    public var fault: FaultCode {
        switch self {
        case .malformed(let error): return error.fault
        case .wrongVehicle: return .wrongVehicle
        case .unknownSigner: return .unknownKey
        case .insufficientPermission: return .insufficientPermission
        case .badSignature: return .badSignature
        case .clockNotTrusted: return .clockNotTrusted
        case .notYetValid: return .notYetValid
        case .expired: return .expired
        case .lifetimeTooLong: return .lifetimeTooLong
        case .notNewer: return .replayedCounter
        }
    }

    public var description: String {
        switch self {
        case .malformed(let error): return "malformed document: \(error)"
        case .notNewer(let version, let current): return "version \(version) is not newer than \(current)"
        default: return name
        }
    }
}
