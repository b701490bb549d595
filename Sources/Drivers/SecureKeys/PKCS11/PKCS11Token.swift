// One logged-in read/write session on the token with a given label, held by a
// carkey-pkcs11-bridge process. Every operation goes through `serialized`, which holds the
// lock: a PKCS#11 session runs one operation at a time.
//
// A bridge that dies while the agent runs (the module crashed, someone killed it) is restarted
// like TPM2Device reconnects: the loss is reported once, each later call tries a new bridge no
// sooner than the backoff allows (doubling up to `maxBackoffMillis`), and the recovery is
// reported. Object handles belong to a session, so `generation` tells key holders to find
// their objects again.
#if canImport(Glibc)
import Glibc
#endif
import CPKCS11
import Protocol

final class PKCS11Token: @unchecked Sendable {
    // @unchecked Sendable: `calls`, `generation` and the restart state change only under `lock`.
    let modulePath: String
    let label: String
    let manufacturer: String
    let model: String
    let bridgeExecutable: String
    static let maxBackoffMillis: UInt64 = 30_000
    private let lock = Lock()
    private var calls: PKCS11Calls?
    private var closed = false
    /// Bumped by every restart of the bridge: handles from an older generation are stale.
    private(set) var generation = 0
    /// Reads the PIN again for a restart (the PIN itself is never kept); nil: no restart.
    private let reloadPIN: (() throws(SecureKeyError) -> Bytes)?
    private var report: (@Sendable (String) -> Void)?
    private var lostSince: UInt64?
    private var retryAt: UInt64 = 0
    private var backoff: UInt64 = 500
    /// A restart the token refused (a wrong or locked PIN): never tried again, since each try
    /// spends one of the PIN's few tries.
    private var refusal: SecureKeyError?

    /// Starts the bridge (`bridge`, or found by PKCS11BridgeLocation), which loads the module,
    /// finds the token labelled `label`, opens a session and logs in as the user.
    init(modulePath: String, label: String, pin: Bytes, bridge: String? = nil,
         reloadPIN: (() throws(SecureKeyError) -> Bytes)? = nil) throws(SecureKeyError) {
        self.modulePath = modulePath
        self.label = label
        self.reloadPIN = reloadPIN
        bridgeExecutable = try PKCS11BridgeLocation.find(configured: bridge)
        let (calls, info) = try Self.open(bridgeExecutable, modulePath: modulePath, label: label, pin: pin)
        manufacturer = info.manufacturer
        model = info.model
        self.calls = calls
    }

    deinit { close() }

    /// Where the loss and the recovery of the bridge are reported (one line each).
    func setReport(_ report: @escaping @Sendable (String) -> Void) {
        lock.withLock { self.report = report }
    }

    /// Runs `body` with the session, holding the lock. Throws when the vault was closed, or
    /// while a lost bridge is being restarted.
    func serialized<R>(_ body: (PKCS11Calls) throws(SecureKeyError) -> R) throws(SecureKeyError) -> R {
        try lock.withLock { () throws(SecureKeyError) -> R in
            guard !closed else {
                throw SecureKeyError.operationFailed(operation: "PKCS#11 token \"\(label)\"", code: UInt64(CKR_SESSION_CLOSED),
                                                     detail: "the vault was closed")
            }
            let current = try session()
            do throws(SecureKeyError) {
                return try body(current)
            } catch {
                if current.bridge.isGone { lost(error) }
                throw error
            }
        }
    }

    /// Stops the bridge (it closes the session, which logs the user out, and finalizes the
    /// module). Idempotent.
    func close() {
        let closing: PKCS11Calls? = lock.withLock {
            defer { calls = nil; closed = true }
            return calls
        }
        closing?.bridge.stop()
    }

    /// The error for a C_Login answer, or nil when the session is logged in. Separate so the
    /// mapping of codes a software token never returns (CKR_PIN_LOCKED) can be tested.
    static func loginFailure(_ rv: CK_RV, label: String) -> SecureKeyError? {
        let device = "PKCS#11 token \"\(label)\""
        switch rv {
        case CKR_OK, CKR_USER_ALREADY_LOGGED_IN:
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

    /// A bridge with the session open and logged in, and the token's manufacturer and model.
    private static func open(_ executable: String, modulePath: String, label: String,
                             pin: Bytes) throws(SecureKeyError) -> (PKCS11Calls, (manufacturer: String, model: String)) {
        let bridge = try PKCS11BridgeProcess(executable: executable, modulePath: modulePath)
        var request = PKCS11BridgeRequest.open(label: label, pin: pin)
        let answer: PKCS11BridgeAnswer
        do throws(SecureKeyError) { answer = try bridge.exchange(&request) } catch {
            bridge.stop()
            throw error
        }
        guard case .ok(let payload) = answer, let info = try? PKCS11BridgeResult.opened(payload) else {
            bridge.stop()
            throw PKCS11OpenFailure.error(answer, modulePath: modulePath, label: label)
        }
        return (PKCS11Calls(bridge: bridge), info)
    }

    /// The live session, restarting a lost bridge when the backoff allows. Called with the lock held.
    private func session() throws(SecureKeyError) -> PKCS11Calls {
        if let calls, !calls.bridge.isGone { return calls }
        if let refusal { throw refusal }
        let now = Self.monotonicMillis()
        guard let reloadPIN, now >= retryAt else {
            throw PKCS11BridgeLocation.unusable(bridgeExecutable, because: reloadPIN == nil
                ? "it stopped answering" : "it stopped answering; restarting it (next try in \(retryAt - now) ms)")
        }
        do throws(SecureKeyError) {
            var pin = try reloadPIN()
            defer { ConstantTime.wipe(&pin) }
            let fresh: PKCS11Calls
            do throws(SecureKeyError) { (fresh, _) = try Self.open(bridgeExecutable, modulePath: modulePath, label: label, pin: pin) } catch {
                // The token refused the PIN: unlike an unreadable PIN file, a retry costs a try.
                if case .locked = error {
                    refusal = error
                    report?("key vault: pkcs11: restarting the PKCS#11 bridge: \(error); not retried (each try spends a PIN try): "
                        + "correct the PIN file and restart the agent")
                }
                throw error
            }
            calls = fresh
            generation += 1
            report?("key vault: pkcs11: the PKCS#11 bridge answers again after \((now - (lostSince ?? now)) / 1000) s: restarted, "
                + "token \"\(label)\" logged in")
            lostSince = nil
            backoff = 500
            return fresh
        } catch {
            retryAt = now + backoff
            backoff = min(backoff * 2, Self.maxBackoffMillis)
            throw error
        }
    }

    /// Records a lost bridge (reported once per loss).
    private func lost(_ error: SecureKeyError) {
        guard lostSince == nil else { return }
        lostSince = Self.monotonicMillis()
        retryAt = 0
        report?("key vault: pkcs11: \(error); the vault's operations fail until a new bridge logs in "
            + "(restarted with backoff up to \(Self.maxBackoffMillis / 1000) s)")
    }

    private static func monotonicMillis() -> UInt64 { SystemClock().nowMillis() }
}
