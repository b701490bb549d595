// Why a share certificate or revocation could not be made (issuing side: CLI, owner app).

public enum KeyObjectError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A field value the format does not allow; names the field.
    case invalid(MessageFormatError)
    /// The owner key could not sign.
    case signingFailed

    public var description: String {
        switch self {
        case .invalid(let error): return "\(error)"
        case .signingFailed: return "the owner key could not sign"
        }
    }
}
