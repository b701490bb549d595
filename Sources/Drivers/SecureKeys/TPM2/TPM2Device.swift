// One connection to the TPM, behind one lock. A connection carries one command at a time and
// the agent signs and does ECDH from more than one thread, so every TPM command goes through
// `withContext`, which serialises them (a TPM runs one command at a time anyway).
#if canImport(Glibc)
import Glibc
#endif
import Protocol

/// A transient object the TPM holds for us: its handle, its Name (for cpHash) and public area.
struct TPM2LoadedObject {
    var handle: UInt32
    var name: Bytes
    var publicArea: TPM2PublicArea
}

final class TPM2Device: @unchecked Sendable {
    // @unchecked Sendable: `client` is only touched while `lock` is held.
    /// The TCTI configuration string ("device:/dev/tpmrm0", "swtpm:host=...,port=...").
    let tcti: String
    private let transport: TPM2TCTI
    private let lock = Lock()
    private var client: TPM2Client?
    /// Set when the transport failed: the connection is dropped and the caller hears "the TPM
    /// is gone" (not a TPM error), and the next call due (`retryAt`) connects again.
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
    var primary: TPM2LoadedObject?
    var identity: TPM2LoadedObject?
    var identityFiles: TPM2BlobFiles?

    /// `opening`: how a connection is made (tests wrap the real one to corrupt bytes in flight);
    /// by default the transport `tcti` names.
    init(tcti: String, opening: TPM2Opener? = nil) throws(SecureKeyError) {
        self.tcti = tcti
        switch TPM2TCTI.parse(tcti) {
        case .success(let parsed): transport = parsed
        case .failure(let error): throw .deviceMissing(device: "TPM 2.0 at \(tcti)", fix: error.detail)
        }
        self.opening = opening ?? { tcti in try tcti.open() }
        try connect()
    }

    private let opening: TPM2Opener

    /// A new connection (the old one, if any, already closed).
    private func connect() throws(SecureKeyError) {
        do {
            client = TPM2Client(transport: try opening(transport))
        } catch let error as TPM2TransportError {
            throw unreachable(error.detail)
        } catch {
            throw unreachable("\(error)")
        }
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
            guard let client else { throw unreachable("not connected") }
            let primary = try createPrimary(client)
            self.primary = primary
            if identity != nil, let files = identityFiles {
                identity = nil
                guard let blobs = try files.read() else {
                    throw .malformed(what: "\(files.publicPath) (gone while the TPM was away)")
                }
                identity = try load(client, parent: primary, blobs: blobs, files: files)
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

    /// Ends the connection. `beforeClosing` runs first with it (flushes of transient objects);
    /// later calls to `withContext` throw.
    func close(_ beforeClosing: (TPM2Client) -> Void = { _ in }) {
        lock.withLock {
            if let client, !lost { beforeClosing(client) }
            closed = true
            finalize()
        }
    }

    private func finalize() {
        client?.close()
        client = nil
    }

    /// Runs `body` with the connection, holding the lock.
    func withContext<T>(_ body: (TPM2Client) throws(SecureKeyError) -> T) throws(SecureKeyError) -> T {
        lock.lock()
        defer { lock.unlock() }
        guard !closed else {
            throw .deviceMissing(device: deviceName, fix: "the TPM key vault was closed; open it again")
        }
        if lost { try reconnect() }
        guard let client else { throw unreachable("not connected") }
        return try body(client)
    }

    var deviceName: String { "TPM 2.0 at \(tcti)" }

    /// Runs `call`, turning a failure into the vault's error for `operation`.
    func run(_ client: TPM2Client, _ call: TPM2Call, _ operation: String) throws(SecureKeyError) -> TPM2Result {
        do { return try client.run(call) } catch { throw self.error(error, operation) }
    }

    /// What a failed command means for the caller. A transport failure is the TPM going away,
    /// which the operator fixes differently from a TPM that answered with an error.
    func error(_ failure: TPM2Failure, _ operation: String) -> SecureKeyError {
        switch failure {
        case .transport(let transport):
            // Callers hold the lock (they are inside `withContext`). Reported once per loss,
            // not once per refused session. The connection is dropped: what was in flight on
            // it is unknown, and the next call due connects again.
            if !lost {
                lost = true
                lostSince = Self.monotonicMillis()
                retryAt = lostSince
                report?("key vault: tpm2: \(deviceName) stopped answering during \(operation) (\(transport.detail)): "
                        + "sessions are refused until it answers again; reconnecting with backoff up to \(Self.maxBackoffMillis / 1000) s")
            }
            finalize()
            return unreachable(transport.detail)
        case .tpm(let code) where code == TPM2Code.lockout:
            return .locked(device: deviceName, fix: Self.lockoutFix)
        case .tpm(let code):
            return .operationFailed(operation: "TPM2 \(operation)", code: UInt64(code), detail: TPM2CommandFrame.describe(code))
        case .response(let detail):
            return .operationFailed(operation: "TPM2 \(operation)", code: 0, detail: "unusable response: \(detail)")
        }
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
    func shutdown(_ client: TPM2Client) {
        guard !lost else { return }
        var parameters = TPM2Writer()
        parameters.u16(TPM2Code.shutdownClear)
        _ = try? client.run(TPM2Call(code: TPM2CommandCode.shutdown, parameters: parameters.bytes))
    }

    private func unreachable(_ detail: String) -> SecureKeyError {
        .deviceMissing(device: deviceName,
                       fix: "no TPM answered (\(detail)): check that the TPM is enabled, that the device "
                           + "exists and this user may open it (group tss for /dev/tpmrm0), and the vault's tcti setting")
    }

    /// Flushes a transient object or session, ignoring failure (used on cleanup paths, where
    /// the first error is the one worth reporting). TPM2_FlushContext takes the handle as a
    /// parameter, not in the handle area (Part 3 §28.4).
    func flush(_ client: TPM2Client, _ handle: UInt32?) {
        guard let handle else { return }
        var parameters = TPM2Writer()
        parameters.u32(handle)
        _ = try? client.run(TPM2Call(code: TPM2CommandCode.flushContext, parameters: parameters.bytes))
    }
}
