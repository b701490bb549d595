// One ESYS context on one TCTI, behind one lock. ESYS contexts are not thread-safe and the
// agent signs and does ECDH from more than one thread, so every TPM command goes through
// `withContext`, which serialises them (a TPM runs one command at a time anyway).
#if canImport(Glibc)
import Glibc
#endif
import CTSS2

final class TPM2Device: @unchecked Sendable {
    // @unchecked Sendable: `esys` and `tctiContext` are only touched while `lock` is held.
    let library: TPM2Library
    /// The TCTI configuration string ("device:/dev/tpmrm0", "swtpm:host=...,port=...").
    let tcti: String
    private let lock = Lock()
    private var esys: OpaquePointer?
    private var tctiContext: OpaquePointer?
    /// Set when the transport failed: ESYS then refuses every later call as out of sequence,
    /// which would read as a TPM error; the caller should hear "the TPM is gone" instead, and
    /// the next call due (`retryAt`) connects again.
    private var lost = false
    private var closed = false
    /// Monotonic milliseconds before which no reconnect is tried, and the next wait (doubled
    /// per failed try up to `maxBackoffMillis`): a dead TPM is not hammered once per session.
    private var retryAt: UInt64 = 0
    private var backoffMillis: UInt64 = TPM2Device.firstBackoffMillis
    static let firstBackoffMillis: UInt64 = 250
    static let maxBackoffMillis: UInt64 = 8_000
    private var lostSince: UInt64 = 0
    private var report: (@Sendable (String) -> Void)?

    /// The transient objects the vault uses, read and written under the lock. A reconnect
    /// derives the primary again and reloads the identity from `identityFiles`: the TPM that
    /// comes back (restarted, power-cycled) has forgotten both.
    var primary: ESYS_TR = ESYS_TR_NONE
    var identity: ESYS_TR = ESYS_TR_NONE
    var identityFiles: TPM2BlobFiles?

    init(tcti: String) throws(SecureKeyError) {
        library = try TPM2Library.shared()
        self.tcti = tcti
        try connect()
    }

    /// A TCTI and an ESYS context on it (the old ones, if any, already finalised).
    private func connect() throws(SecureKeyError) {
        var tctiContext: OpaquePointer?
        let loaded = library.tctiInitialize(tcti, &tctiContext)
        guard loaded == TSS2_RC_SUCCESS, let tctiContext else { throw unreachable(loaded) }
        var esys: OpaquePointer?
        let initialised = library.initialize(&esys, tctiContext, nil)
        guard initialised == TSS2_RC_SUCCESS, esys != nil else {
            var doomed: OpaquePointer? = tctiContext
            library.tctiFinalize(&doomed)
            throw unreachable(initialised)
        }
        self.tctiContext = tctiContext
        self.esys = esys
    }

    func setReport(_ report: @escaping @Sendable (String) -> Void) {
        lock.withLock { self.report = report }
    }

    /// After a transport failure, when due: a new connection, the primary derived again, the
    /// identity reloaded. Throws (and waits longer before the next try) while the TPM is away.
    private func reconnect() throws(SecureKeyError) {
        let now = Self.monotonicMillis()
        guard now >= retryAt else {
            throw .deviceMissing(device: deviceName, fix: "the TPM stopped answering; reconnecting (next try in \(retryAt - now) ms)")
        }
        finalize()
        do throws(SecureKeyError) {
            try connect()
            guard let esys else { throw unreachable(0) }
            primary = try createPrimary(esys)
            if identity != ESYS_TR_NONE, let files = identityFiles {
                identity = ESYS_TR_NONE
                guard let blobs = try files.read(library) else {
                    throw .malformed(what: "\(files.publicPath) (gone while the TPM was away)")
                }
                identity = try load(esys, parent: primary, public: blobs.public, private: blobs.private, files: files)
            }
        } catch {
            finalize()
            lost = true
            retryAt = Self.monotonicMillis() + backoffMillis
            backoffMillis = min(backoffMillis * 2, Self.maxBackoffMillis)
            throw error
        }
        lost = false
        backoffMillis = Self.firstBackoffMillis
        report?("key vault: tpm2: \(deviceName) answers again after \((Self.monotonicMillis() - lostSince) / 1000) s: reconnected, "
                + "primary derived and identity reloaded")
    }

    private static func monotonicMillis() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return UInt64(spec.tv_sec) &* 1000 &+ UInt64(spec.tv_nsec) / 1_000_000
    }

    deinit { finalize() }

    /// Ends the ESYS context and the TCTI. `beforeClosing` runs first with the context (flushes
    /// of transient objects); later calls to `withContext` throw.
    func close(_ beforeClosing: (OpaquePointer) -> Void = { _ in }) {
        lock.withLock {
            if let esys, !lost { beforeClosing(esys) }
            closed = true
            finalize()
        }
    }

    private func finalize() {
        if esys != nil { library.finalize(&esys) }
        if tctiContext != nil { library.tctiFinalize(&tctiContext) }
        esys = nil
        tctiContext = nil
    }

    /// Runs `body` with the ESYS context, holding the lock.
    func withContext<T>(_ body: (OpaquePointer) throws(SecureKeyError) -> T) throws(SecureKeyError) -> T {
        lock.lock()
        defer { lock.unlock() }
        guard !closed else {
            throw .deviceMissing(device: deviceName, fix: "the TPM key vault was closed; open it again")
        }
        if lost { try reconnect() }
        guard let esys else { throw unreachable(0) }
        return try body(esys)
    }

    var deviceName: String { "TPM 2.0 at \(tcti)" }

    /// Throws the error for `code` unless it is success.
    func check(_ code: TSS2_RC, _ operation: String) throws(SecureKeyError) {
        guard code != TSS2_RC_SUCCESS else { return }
        throw error(code, operation)
    }

    /// What a failed command means for the caller. A TCTI (transport) failure, or any layer
    /// reporting I/O or connection loss, is the TPM going away, which the operator fixes
    /// differently from a TPM that answered with an error.
    func error(_ code: TSS2_RC, _ operation: String) -> SecureKeyError {
        let layer = TPM2Layer.of(code)
        let base = code & 0xFFFF
        if layer == TPM2Layer.tcti || (layer != TPM2Layer.tpm && (base == TSS2_BASE_RC_IO_ERROR || base == TSS2_BASE_RC_NO_CONNECTION)) {
            // Callers hold the lock (they are inside `withContext`). Reported once per loss,
            // not once per refused session.
            if !lost {
                lost = true
                lostSince = Self.monotonicMillis()
                retryAt = lostSince
                report?("key vault: tpm2: \(deviceName) stopped answering during \(operation) (\(library.describe(code))): "
                        + "sessions are refused until it answers again; reconnecting with backoff up to \(Self.maxBackoffMillis / 1000) s")
            }
            return unreachable(code)
        }
        if layer == TPM2Layer.tpm && code & 0xFFFF == TPM2Code.lockout {
            return .locked(device: deviceName, fix: Self.lockoutFix)
        }
        return .operationFailed(operation: "TPM2 \(operation)", code: UInt64(code), detail: library.describe(code))
    }

    /// TPM_RC_LOCKOUT on the car's own objects: they lack noDA (made by an older version), and
    /// power cuts while the agent ran counted as failed authorisations until the TPM locked.
    static let lockoutFix = "the TPM is in dictionary-attack lockout (TPM_RC_LOCKOUT): this car's tpm2 objects were made by an "
        + "older carkey-agent without noDA, so every power cut while the agent ran counted as a failed authorisation. "
        + "Clear it with `tpm2_dictionarylockout --clear-lockout` (as root; the lockout auth is empty unless someone set one), "
        + "or wait for the TPM's lockout recovery time; docs/operations.md, section 13, says how to stop it recurring"

    /// TPM2_Shutdown(CLEAR) before a clean close, so a power cut before the next start is an
    /// orderly one to the TPM. Ignored when it fails (the TPM is gone, or a resource manager
    /// refuses it): the car's objects carry noDA, so an unclean cut costs nothing but that.
    func shutdown(_ esys: OpaquePointer) {
        guard !lost else { return }
        _ = library.shutdown(esys, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, TPM2Code.shutdownClear)
    }

    private func unreachable(_ code: TSS2_RC) -> SecureKeyError {
        .deviceMissing(device: deviceName,
                       fix: "no TPM answered (\(library.describe(code))): check that the TPM is enabled, that the device "
                           + "exists and this user may open it (group tss for /dev/tpmrm0), and the vault's tcti setting")
    }

    /// Copies an ESYS-allocated output and frees it (Esys_Free), so no caller forgets to.
    func take<T>(_ pointer: UnsafeMutablePointer<T>?) -> T? {
        guard let pointer else { return nil }
        let value = pointer.pointee
        library.free(pointer)
        return value
    }

    /// As `take`, for outputs holding secrets: the ESYS copy is zeroed before it is freed.
    func takeSecret<T>(_ pointer: UnsafeMutablePointer<T>?) -> T? {
        guard let pointer else { return nil }
        let value = pointer.pointee
        explicit_bzero(pointer, MemoryLayout<T>.size)
        library.free(pointer)
        return value
    }

    /// Flushes a transient object or session, ignoring failure (used on cleanup paths, where
    /// the first error is the one worth reporting).
    func flush(_ esys: OpaquePointer, _ handle: ESYS_TR) {
        guard handle != ESYS_TR_NONE else { return }
        _ = library.flushContext(esys, handle)
    }
}
