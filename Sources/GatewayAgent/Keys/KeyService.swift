// What the agent does with the engine's key actions: remember share keys after their first
// handshake, note last use, let owners' signed timestamps anchor trusted time, enroll owners
// proven by the pairing window, apply revocations (from a session or the cloud), and open the
// pairing window. Runs on the agent's loop thread; CarService hands it the engine.
import Drivers
import Protocol

/// Why the pairing window was not opened.
enum PairingRefusal: Error, Equatable, CustomStringConvertible {
    /// Every key slot is taken: a code would be wasted on an enrollment bound to fail.
    case keychainFull(activeKeys: Int, capacity: Int)
    case failed(FaultCode)

    var description: String {
        switch self {
        case .keychainFull(let active, let capacity):
            return "keychain full (\(active) of \(capacity) key slots in use): revoke a key before pairing a new owner"
        case .failed(let fault): return "the pairing window could not be opened (\(fault.name))"
        }
    }

    /// The protocol fault that says the same (keychainFull for a full keychain).
    var fault: FaultCode {
        switch self {
        case .keychainFull: return .keychainFull
        case .failed(let fault): return fault
        }
    }
}

struct PairingWindowOpened {
    /// Secret while the window is open: shown to the person at the car, never logged.
    let code: PairingCode
    let expiresInSeconds: UInt64
}

final class KeyService {
    /// Trusted-time mark writes: at most one per this much growth (and at stop).
    static let markStepSeconds: Int64 = 60

    let keychain: StoredKeychain
    /// Rows left out at load (tampered or unreadable), for the start-up report.
    let skipped: [SkippedRecord]
    let shareCount: Int
    private let store: CarStore
    private let clock: AgentClock
    private let log: AgentLog
    /// Keeps the store inside its budget on every tick; nil when the store has none (tests).
    var storeKeeper: StoreKeeper?
    /// True once "waiting for a second source" was logged; the condition lasts until trusted
    /// time is anchored, and owners' sessions keep meeting it, so it is logged when it starts.
    private var awaitingCorroborationLogged = false

    init(store: CarStore, loaded: LoadedKeychain, clock: AgentClock, log: AgentLog) {
        self.store = store
        self.clock = clock
        self.log = log
        self.skipped = loaded.skipped
        self.shareCount = loaded.shareCount
        keychain = StoredKeychain(store: store, keychain: loaded.keychain, log: log, nowMillis: clock.monotonicMillis)
    }

    /// Loads the keychain from `store` (tampered rows are reported and skipped).
    static func load(store: CarStore, capacity: Int, clock: AgentClock, log: AgentLog) throws -> KeyService {
        KeyService(store: store, loaded: try KeychainLoader.load(from: store, capacity: capacity), clock: clock, log: log)
    }

    /// The engine's view: the seam is `any KeyDirectory`, so tests and the simulator can swap it.
    var directory: any KeyDirectory { keychain.shared }
    var certificateVerifier: any ShareCertificateVerifier { keychain.shared }

    // MARK: Engine actions

    /// A session was established: remember a share key (a share the car cannot remember is not
    /// honoured: its sessions end), note the use, and let an owner's signed time vouch.
    func authenticated(_ grant: AccessGrant, engine: inout CarProtocolEngine, now: ProtocolTime) -> [CarAction] {
        if grant.presentedCertificate != nil {
            do throws(FaultCode) {
                try keychain.install(grant, now: now)
                log.info("\(grant.link) share installed: key \(grant.keyID), \(KeyDescription.permissions(grant.record))"
                         + (grant.record.share.map { ", serial \($0.serial), issuer \($0.issuer)" } ?? ""))
            } catch {
                log.info("\(grant.link) share of key \(grant.keyID) not installed (\(error.name)): ending its sessions")
                return engine.terminateSessions(of: grant.keyID, reason: error, now: now)
            }
        }
        keychain.recordUse(of: grant.keyID, now: now)
        if grant.record.role == .owner {
            let outcome = clock.observeOwnerTimestamp(grant.phoneTimestamp, keyID: grant.keyID)
            switch outcome {
            case .anchored(let seconds):
                awaitingCorroborationLogged = false
                log.info("trusted time anchored at \(ISO8601.format(seconds)) by owner key \(grant.keyID)")
                persistTrustedTime(minimumStep: 0)
            case .awaitingCorroboration:
                log.line(awaitingCorroborationLogged ? .debug : .info,
                         "trusted time: owner key \(grant.keyID) vouches for a time too far from the mark; waiting for a second source")
                awaitingCorroborationLogged = true
            case .behindMark, .alreadyTrusted:
                break
            }
        }
        return []
    }

    /// A phone proved the pairing code: enroll it, then let the engine answer.
    func enroll(_ request: EnrollmentRequest, engine: inout CarProtocolEngine, now: ProtocolTime) -> [CarAction] {
        var result: FaultCode?
        do throws(FaultCode) {
            try keychain.enroll(request, now: now)
            log.info("\(request.link) owner key \(request.keyID) enrolled")
        } catch {
            result = error
            log.info("\(request.link) owner key \(request.keyID) not enrolled: \(error.name)")
        }
        return engine.completeEnrollment(request.token, result: result, now: now)
    }

    /// An owner's session carried a verified revocation: apply it, then let the engine answer
    /// (and end the affected sessions).
    func revoke(_ request: RevocationRequest, engine: inout CarProtocolEngine, vehicleState: VehicleState,
                now: ProtocolTime) -> [CarAction] {
        var result: FaultCode?
        do throws(FaultCode) {
            let outcome = try keychain.apply(request.revocation, carriedBy: request.keyID, link: request.link, source: "session", now: now)
            log.info("\(request.link) revocation of \(request.revocation.target) by \(request.revocation.issuer) applied: "
                     + "\(outcome.revokedKeys.count) key(s) revoked")
        } catch {
            result = error
            log.info("\(request.link) revocation of \(request.revocation.target) refused: \(error.name)")
        }
        return engine.complete(request.token, result: result, vehicleState: vehicleState, now: now)
    }

    /// A signed revocation that arrived outside a session (the cloud): the same checks, then
    /// the affected sessions end at once. Returns nil on success or the fault.
    func applyRevocation(_ bytes: Bytes, source: String, engine: inout CarProtocolEngine,
                         now: ProtocolTime) -> (fault: FaultCode?, actions: [CarAction]) {
        do throws(FaultCode) {
            let verified = try RevocationValidator.verify(bytes, vehicleID: engine.configuration.vehicleID, keys: keychain.shared)
            let outcome = try keychain.apply(verified, carriedBy: nil, link: nil, source: source, now: now)
            log.info("revocation of \(verified.target) by \(verified.issuer) from \(source) applied: \(outcome.revokedKeys.count) key(s) revoked")
            return (nil, engine.terminateSessions(revokedBy: verified.target, now: now))
        } catch {
            log.info("revocation from \(source) refused: \(error.name)")
            return (error, [])
        }
    }

    /// Opens the pairing window if a key slot is free. The code goes to the caller only.
    func openPairingWindow(engine: inout CarProtocolEngine,
                           now: ProtocolTime) -> (result: Result<PairingWindowOpened, PairingRefusal>, actions: [CarAction]) {
        let snapshot = keychain.snapshot
        guard snapshot.hasFreeSlot else {
            log.info("pairing window not opened: keychain full")
            return (.failure(.keychainFull(activeKeys: snapshot.activeKeyCount, capacity: snapshot.capacity)), [])
        }
        do throws(FaultCode) {
            let (code, actions) = try engine.openPairingWindow(now: now)
            let seconds = engine.configuration.pairing.windowMillis / 1000
            log.info("pairing window opened for \(seconds) s")
            return (.success(PairingWindowOpened(code: code, expiresInSeconds: seconds)), actions)
        } catch {
            return (.failure(.failed(error)), [])
        }
    }

    // MARK: Housekeeping

    /// Once a second: batched last-use times and the trusted-time mark, when due, and the
    /// store budget's round.
    func tick(now: ProtocolTime) {
        keychain.flushActivity(nowMillis: now.monotonicMillis)
        persistTrustedTime(minimumStep: Self.markStepSeconds)
        storeKeeper?.tick(now: now)
    }

    /// At stop: everything pending, whatever the interval.
    func shutdown(now: ProtocolTime) {
        keychain.flushActivity(nowMillis: now.monotonicMillis, force: true)
        persistTrustedTime(minimumStep: 0)
    }

    private func persistTrustedTime(minimumStep: Int64) {
        guard let mark = clock.markToPersist(minimumStepSeconds: minimumStep) else { return }
        do {
            clock.notePersisted(try store.advanceTrustedTime(to: mark))
        } catch {
            log.info("trusted time: mark not written (retried later): \(error)")
        }
    }
}
