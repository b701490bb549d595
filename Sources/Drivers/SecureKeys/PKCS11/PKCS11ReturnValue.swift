// PKCS#11 return values (CK_RV): names for error text and the one check every call goes through.
import CPKCS11

enum PKCS11ReturnValue {
    /// The spec name of `rv` (PKCS#11 v2.40 section 11.1), or "vendor-defined"/"unknown".
    static func name(_ rv: CK_RV) -> String {
        switch rv {
        case CKR_OK: return "CKR_OK"
        case CKR_HOST_MEMORY: return "CKR_HOST_MEMORY"
        case CKR_SLOT_ID_INVALID: return "CKR_SLOT_ID_INVALID"
        case CKR_GENERAL_ERROR: return "CKR_GENERAL_ERROR"
        case CKR_FUNCTION_FAILED: return "CKR_FUNCTION_FAILED"
        case CKR_ARGUMENTS_BAD: return "CKR_ARGUMENTS_BAD"
        case CKR_CANT_LOCK: return "CKR_CANT_LOCK"
        case CKR_ATTRIBUTE_SENSITIVE: return "CKR_ATTRIBUTE_SENSITIVE"
        case CKR_ATTRIBUTE_TYPE_INVALID: return "CKR_ATTRIBUTE_TYPE_INVALID"
        case CKR_ATTRIBUTE_VALUE_INVALID: return "CKR_ATTRIBUTE_VALUE_INVALID"
        case CKR_DATA_INVALID: return "CKR_DATA_INVALID"
        case CKR_DATA_LEN_RANGE: return "CKR_DATA_LEN_RANGE"
        case CKR_DEVICE_ERROR: return "CKR_DEVICE_ERROR"
        case CKR_DEVICE_MEMORY: return "CKR_DEVICE_MEMORY"
        case CKR_DEVICE_REMOVED: return "CKR_DEVICE_REMOVED"
        case CKR_ENCRYPTED_DATA_INVALID: return "CKR_ENCRYPTED_DATA_INVALID"
        case CKR_ENCRYPTED_DATA_LEN_RANGE: return "CKR_ENCRYPTED_DATA_LEN_RANGE"
        case CKR_FUNCTION_NOT_SUPPORTED: return "CKR_FUNCTION_NOT_SUPPORTED"
        case CKR_KEY_HANDLE_INVALID: return "CKR_KEY_HANDLE_INVALID"
        case CKR_KEY_TYPE_INCONSISTENT: return "CKR_KEY_TYPE_INCONSISTENT"
        case CKR_KEY_FUNCTION_NOT_PERMITTED: return "CKR_KEY_FUNCTION_NOT_PERMITTED"
        case CKR_MECHANISM_INVALID: return "CKR_MECHANISM_INVALID"
        case CKR_MECHANISM_PARAM_INVALID: return "CKR_MECHANISM_PARAM_INVALID"
        case CKR_OBJECT_HANDLE_INVALID: return "CKR_OBJECT_HANDLE_INVALID"
        case CKR_OPERATION_ACTIVE: return "CKR_OPERATION_ACTIVE"
        case CKR_OPERATION_NOT_INITIALIZED: return "CKR_OPERATION_NOT_INITIALIZED"
        case CKR_PIN_INCORRECT: return "CKR_PIN_INCORRECT"
        case CKR_PIN_INVALID: return "CKR_PIN_INVALID"
        case CKR_PIN_LEN_RANGE: return "CKR_PIN_LEN_RANGE"
        case CKR_PIN_EXPIRED: return "CKR_PIN_EXPIRED"
        case CKR_PIN_LOCKED: return "CKR_PIN_LOCKED"
        case CKR_SESSION_CLOSED: return "CKR_SESSION_CLOSED"
        case CKR_SESSION_COUNT: return "CKR_SESSION_COUNT"
        case CKR_SESSION_HANDLE_INVALID: return "CKR_SESSION_HANDLE_INVALID"
        case CKR_SESSION_READ_ONLY: return "CKR_SESSION_READ_ONLY"
        case CKR_TEMPLATE_INCOMPLETE: return "CKR_TEMPLATE_INCOMPLETE"
        case CKR_TEMPLATE_INCONSISTENT: return "CKR_TEMPLATE_INCONSISTENT"
        case CKR_TOKEN_NOT_PRESENT: return "CKR_TOKEN_NOT_PRESENT"
        case CKR_TOKEN_NOT_RECOGNIZED: return "CKR_TOKEN_NOT_RECOGNIZED"
        case CKR_TOKEN_WRITE_PROTECTED: return "CKR_TOKEN_WRITE_PROTECTED"
        case CKR_USER_ALREADY_LOGGED_IN: return "CKR_USER_ALREADY_LOGGED_IN"
        case CKR_USER_NOT_LOGGED_IN: return "CKR_USER_NOT_LOGGED_IN"
        case CKR_USER_PIN_NOT_INITIALIZED: return "CKR_USER_PIN_NOT_INITIALIZED"
        case CKR_USER_TYPE_INVALID: return "CKR_USER_TYPE_INVALID"
        case CKR_USER_ANOTHER_ALREADY_LOGGED_IN: return "CKR_USER_ANOTHER_ALREADY_LOGGED_IN"
        case CKR_DOMAIN_PARAMS_INVALID: return "CKR_DOMAIN_PARAMS_INVALID"
        case CKR_CURVE_NOT_SUPPORTED: return "CKR_CURVE_NOT_SUPPORTED"
        case CKR_BUFFER_TOO_SMALL: return "CKR_BUFFER_TOO_SMALL"
        case CKR_CRYPTOKI_NOT_INITIALIZED: return "CKR_CRYPTOKI_NOT_INITIALIZED"
        case CKR_CRYPTOKI_ALREADY_INITIALIZED: return "CKR_CRYPTOKI_ALREADY_INITIALIZED"
        case CKR_MUTEX_BAD: return "CKR_MUTEX_BAD"
        default: return rv >= 0x8000_0000 ? "vendor-defined return value" : "unknown return value"
        }
    }

    /// Codes that say the token or the session went away, as opposed to an answer about the
    /// data: a decrypt failing with one of these is not evidence of a foreign blob.
    static func isDeviceFailure(_ rv: CK_RV) -> Bool {
        switch rv {
        case CKR_DEVICE_ERROR, CKR_DEVICE_MEMORY, CKR_DEVICE_REMOVED, CKR_TOKEN_NOT_PRESENT,
             CKR_SESSION_CLOSED, CKR_SESSION_HANDLE_INVALID, CKR_CRYPTOKI_NOT_INITIALIZED,
             CKR_HOST_MEMORY, CKR_USER_NOT_LOGGED_IN, CKR_FUNCTION_NOT_SUPPORTED,
             CKR_MECHANISM_INVALID, CKR_MECHANISM_PARAM_INVALID:
            return true
        default:
            return false
        }
    }

    /// Throws `.operationFailed` unless `rv` is CKR_OK.
    static func check(_ rv: CK_RV, _ operation: String) throws(SecureKeyError) {
        guard rv != CKR_OK else { return }
        throw failure(rv, operation)
    }

    static func failure(_ rv: CK_RV, _ operation: String) -> SecureKeyError {
        .operationFailed(operation: operation, code: UInt64(rv), detail: name(rv))
    }
}
