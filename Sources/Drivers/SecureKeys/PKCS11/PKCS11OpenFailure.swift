// The typed error for a refused OPEN (loading the module, finding the token, logging in): each
// says what is wrong and what to do, in the words the in-process loader used.
import CPKCS11

enum PKCS11OpenFailure {
    static func error(_ answer: PKCS11BridgeAnswer, modulePath: String, label: String) -> SecureKeyError {
        let module = "PKCS#11 module \(modulePath)"
        switch answer {
        case .ok:
            return .malformed(what: "OPEN answer from the PKCS#11 bridge")
        case .pkcs11(let rv, "C_Login"):
            return PKCS11Token.loginFailure(CK_RV(rv), label: label) ?? .malformed(what: "C_Login answer")
        case .pkcs11(let rv, let function):
            return PKCS11ReturnValue.failure(CK_RV(rv), "\(function) (\(modulePath))")
        case .bridge(.moduleMissing, _):
            return .deviceMissing(device: module, fix: "no such file: install the token's module "
                + "(softhsm2 for /usr/lib/softhsm/libsofthsm2.so, libtpm2-pkcs11-1 for libtpm2_pkcs11.so.1, "
                + "or the secure element vendor's module) or correct the module path in the config")
        case .bridge(.moduleNotLoadable, let reason):
            return .deviceMissing(device: module, fix: "cannot load it (\(reason)): install its dependencies or the module built for this board")
        case .bridge(.notPKCS11, _):
            return .deviceMissing(device: module, fix: "not a PKCS#11 module (no C_GetFunctionList): check the module path in the config")
        case .bridge(.unsupportedVersion, let version):
            return .deviceMissing(device: module, fix: "module speaks PKCS#11 \(version); a 2.x module is needed")
        case .bridge(.tokenNotFound, let seen):
            let present = seen.isEmpty ? "no initialised token is present" : "tokens present: \(seen)"
            return .deviceMissing(device: "PKCS#11 token \"\(label)\" (module \(modulePath))",
                fix: "\(present); list them with `softhsm2-util --show-slots` or `p11tool --list-tokens`, "
                    + "and correct the token label in the config or initialise the token")
        case .bridge(let failure, let detail):
            return .operationFailed(operation: "open PKCS#11 token \"\(label)\"", code: UInt64(CKR_GENERAL_ERROR),
                                    detail: "the PKCS#11 bridge refused it (\(failure), \(detail))")
        }
    }
}
