// The verdict logic shared by `carkey crypto verify` and its --batch mode.
import Protocol

enum SignatureCheck {
    enum Verdict: Equatable {
        case valid
        case invalid(String)

        var line: String {
            switch self {
            case .valid: return "valid"
            case .invalid(let reason): return "invalid: \(reason)"
            }
        }
    }

    /// Parses `encoding` ("der", "raw" or "auto": 64 bytes is raw, anything else DER).
    static func encoding(named name: String, signature: Bytes) -> SignatureEncoding? {
        switch name {
        case "der": return .der
        case "raw": return .raw
        case "auto": return signature.count == 64 ? .raw : .der
        default: return nil
        }
    }

    /// Verifies; every refusal becomes a reason, never a crash.
    static func verify(key: P256PublicKey, message: Bytes, signature: Bytes, encoding: SignatureEncoding) -> Verdict {
        do {
            try key.verify(signature: signature, encoding: encoding, message: message)
            return .valid
        } catch CryptoError.signatureInvalid {
            return .invalid("signature does not match the message and key")
        } catch let error as CryptoError {
            return .invalid(error.description)
        } catch {
            return .invalid("\(error)")
        }
    }
}
