// One logged-in read/write session on the token with a given label. Every operation goes
// through `serialized`, which holds the lock: a PKCS#11 session runs one operation at a time.
import CPKCS11
import Protocol

final class PKCS11Token: @unchecked Sendable {
    // @unchecked Sendable: `calls` is read and cleared only under `lock`.
    let modulePath: String
    let label: String
    let manufacturer: String
    let model: String
    private let lock = Lock()
    private var calls: PKCS11Calls?

    /// Loads the module, finds the token labelled `label`, opens a session and logs in as the
    /// user. The PIN is used for C_Login only and not kept: a token that disappears needs a
    /// new vault (and so a fresh read of the PIN file) anyway.
    init(modulePath: String, label: String, pin: Bytes) throws(SecureKeyError) {
        let module = try PKCS11Module.acquire(path: modulePath)
        do throws(SecureKeyError) {
            let (slot, info) = try Self.slot(labelled: label, in: module)
            self.modulePath = modulePath
            self.label = label
            self.manufacturer = Self.text(info.manufacturerID)
            self.model = Self.text(info.model)
            let openSession = try module.function(\.C_OpenSession, "C_OpenSession")
            var session: CK_SESSION_HANDLE = 0
            // Read/write: the identity and storage-wrap keys are created as token objects.
            try PKCS11ReturnValue.check(openSession(slot, CKF_SERIAL_SESSION | CKF_RW_SESSION, nil, nil, &session), "C_OpenSession")
            do throws(SecureKeyError) {
                try Self.logIn(module: module, session: session, pin: pin, label: label)
            } catch {
                _ = module.functions.pointee.C_CloseSession?(session)
                throw error
            }
            self.calls = PKCS11Calls(module: module, session: session)
        } catch {
            module.release()
            throw error
        }
    }

    deinit { close() }

    /// Runs `body` with the session, holding the lock. Throws when the vault was closed.
    func serialized<R>(_ body: (PKCS11Calls) throws(SecureKeyError) -> R) throws(SecureKeyError) -> R {
        try lock.withLock { () throws(SecureKeyError) -> R in
            guard let calls else {
                throw SecureKeyError.operationFailed(operation: "PKCS#11 token \"\(label)\"", code: UInt64(CKR_SESSION_CLOSED),
                                                     detail: "the vault was closed")
            }
            return try body(calls)
        }
    }

    /// Closes the session (which logs the user out when it is the application's last on the
    /// token) and releases the module. Idempotent.
    func close() {
        let closing: PKCS11Calls? = lock.withLock {
            defer { calls = nil }
            return calls
        }
        guard let closing else { return }
        _ = closing.module.functions.pointee.C_CloseSession?(closing.session)
        closing.module.release()
    }

    /// The error for a C_Login answer, or nil when the session is logged in. Separate so the
    /// mapping of codes a software token never returns (CKR_PIN_LOCKED) can be tested.
    static func loginFailure(_ rv: CK_RV, label: String) -> SecureKeyError? {
        let device = "PKCS#11 token \"\(label)\""
        switch rv {
        case CKR_OK, CKR_USER_ALREADY_LOGGED_IN:
            // Already logged in: login state is per application and token, and another vault
            // in this process holds a session on it.
            return nil
        case CKR_PIN_INCORRECT, CKR_PIN_INVALID, CKR_PIN_LEN_RANGE:
            return .locked(device: device, fix: "wrong PIN: the PIN file does not hold this token's user PIN "
                + "(tokens count wrong tries and lock the PIN after a few)")
        case CKR_PIN_LOCKED:
            return .locked(device: device, fix: "the user PIN is locked after too many wrong tries: the security officer "
                + "must reset it with the SO PIN (e.g. pkcs11-tool --login --login-type so --init-pin, or the "
                + "vendor's tool), then the PIN file must hold the new PIN")
        case CKR_PIN_EXPIRED:
            return .locked(device: device, fix: "the user PIN has expired: set a new one (pkcs11-tool --change-pin) and update the PIN file")
        case CKR_USER_PIN_NOT_INITIALIZED:
            return .locked(device: device, fix: "the token has no user PIN yet: the security officer must set one (--init-pin)")
        default:
            return PKCS11ReturnValue.failure(rv, "C_Login (\(device))")
        }
    }

    private static func logIn(module: PKCS11Module, session: CK_SESSION_HANDLE, pin: Bytes, label: String) throws(SecureKeyError) {
        let login = try module.function(\.C_Login, "C_Login")
        var copy = pin
        defer { ConstantTime.wipe(&copy) }
        let rv = copy.withUnsafeMutableBufferPointer { login(session, CKU_USER, $0.baseAddress, UInt($0.count)) }
        if let failure = loginFailure(rv, label: label) { throw failure }
    }

    /// The slot whose present token carries `label` (blank-padded to 32 bytes on the token).
    private static func slot(labelled label: String, in module: PKCS11Module) throws(SecureKeyError) -> (CK_SLOT_ID, CK_TOKEN_INFO) {
        let getSlots = try module.function(\.C_GetSlotList, "C_GetSlotList")
        let getToken = try module.function(\.C_GetTokenInfo, "C_GetTokenInfo")
        var count: UInt = 0
        // CK_TRUE: only slots with a token present.
        try PKCS11ReturnValue.check(getSlots(1, nil, &count), "C_GetSlotList")
        var slots = [CK_SLOT_ID](repeating: 0, count: Int(count))
        if count > 0 {
            let rv = slots.withUnsafeMutableBufferPointer { getSlots(1, $0.baseAddress, &count) }
            try PKCS11ReturnValue.check(rv, "C_GetSlotList")
        }
        var seen: [String] = []
        for slot in slots.prefix(Int(count)) {
            var info = CK_TOKEN_INFO()
            guard getToken(slot, &info) == CKR_OK else { continue }
            let tokenLabel = text(info.label)
            if tokenLabel == label { return (slot, info) }
            // SoftHSM (and others) keep one blank slot for the next token: not worth naming.
            if info.flags & CKF_TOKEN_INITIALIZED != 0 { seen.append("\"\(tokenLabel)\"") }
        }
        let present = seen.isEmpty ? "no initialised token is present" : "tokens present: \(seen.joined(separator: ", "))"
        throw SecureKeyError.deviceMissing(device: "PKCS#11 token \"\(label)\" (module \(module.path))",
            fix: "\(present); list them with `softhsm2-util --show-slots` or `p11tool --list-tokens`, "
                + "and correct the token label in the config or initialise the token")
    }

    /// A blank-padded fixed-size field of CK_TOKEN_INFO as text.
    static func text<T>(_ field: T) -> String {
        var bytes = withUnsafeBytes(of: field) { Array($0) }
        while let last = bytes.last, last == 0x20 || last == 0 { bytes.removeLast() }
        return String(decoding: bytes, as: UTF8.self)
    }
}
