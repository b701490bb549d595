// The car's keychain, persistent: the engine reads the in-memory `SharedKeychain` (as its
// KeyDirectory and share-certificate verifier); every change is computed on a copy, written
// to the store in ONE transaction together with its audit event, and only then becomes the
// keychain the engine sees. A failed write changes nothing and is reported as internalError.
//
// Last use is the exception: it changes on every session, and an fsync per session for a
// "last used" column would double the writes of the busiest path. It is kept in memory at
// once (the listing and the console see it) and written in one batch at most every
// `activityFlushMillis`, and at stop. A power cut can lose that much last-use history; it
// cannot lose a key, a share or a revocation.
import Drivers
import Protocol

final class StoredKeychain {
    static let activityFlushMillis: UInt64 = 30_000

    let shared: SharedKeychain
    private let store: CarStore
    private let log: AgentLog
    /// Keys whose activity changed since the last flush (agent thread only).
    private var dirtyActivity: Set<KeyID> = []
    private var lastFlushMillis: UInt64
    /// A failing last-use write is retried every tick (a full disk): logged when it starts.
    private var activityFlushFailing = false

    init(store: CarStore, keychain: Keychain, policy: ShareCertificatePolicy = .init(), log: AgentLog, nowMillis: UInt64) {
        self.store = store
        self.shared = SharedKeychain(keychain, policy: policy)
        self.log = log
        self.lastFlushMillis = nowMillis
    }

    var snapshot: Keychain { shared.snapshot }

    /// Adds an owner key proven through the pairing window.
    func enroll(_ request: EnrollmentRequest, now: ProtocolTime) throws(FaultCode) {
        try commit { (keychain: inout Keychain) throws(FaultCode) -> ([KeychainChange], NewEvent?) in
            let changes = try keychain.enroll(request, now: now)
            guard let record = keychain.lookup(request.keyID) else { return (changes, nil) }
            // Paired again while already an owner: nothing to write, but the pairing is logged.
            return (changes, KeychainEvents.enrolled(record, link: request.link, alreadyEnrolled: changes.isEmpty, now: now))
        }
    }

    /// Remembers a share key whose holder just proved possession.
    func install(_ grant: AccessGrant, now: ProtocolTime) throws(FaultCode) {
        try commit { (keychain: inout Keychain) throws(FaultCode) -> ([KeychainChange], NewEvent?) in
            let changes = try keychain.install(grant, now: now)
            guard let record = keychain.lookup(grant.keyID), !changes.isEmpty else { return (changes, nil) }
            return (changes, KeychainEvents.shareInstalled(record, link: grant.link, now: now))
        }
    }

    /// Applies a verified revocation; returns the keys it revoked.
    @discardableResult
    func apply(_ revocation: VerifiedRevocation, carriedBy: KeyID?, link: LinkID?, source: String,
               now: ProtocolTime) throws(FaultCode) -> RevocationOutcome {
        var outcome: RevocationOutcome?
        try commit { (keychain: inout Keychain) throws(FaultCode) -> ([KeychainChange], NewEvent?) in
            let result = try keychain.apply(revocation, now: now)
            outcome = result
            // A repeated revocation changes nothing but is still worth a line in the log.
            return (result.changes, KeychainEvents.revoked(revocation, outcome: result, carriedBy: carriedBy, link: link,
                                                           source: source, now: now))
        }
        guard let outcome else { throw .internalError }
        return outcome
    }

    /// Notes an established session; written by the next `flushActivity`.
    func recordUse(of keyID: KeyID, now: ProtocolTime) {
        let changes = try? shared.update { (keychain: inout Keychain) throws(FaultCode) -> [KeychainChange] in
            keychain.recordUse(of: keyID, now: now)
        }
        if changes?.isEmpty == false { dirtyActivity.insert(keyID) }
    }

    /// Last-use changes not yet written.
    var pendingActivityCount: Int { dirtyActivity.count }

    /// Writes pending last-use changes in one transaction when the interval has passed (or
    /// `force`, at stop). A failed write keeps them pending for the next attempt.
    func flushActivity(nowMillis: UInt64, force: Bool = false) {
        guard !dirtyActivity.isEmpty, force || nowMillis >= lastFlushMillis + Self.activityFlushMillis else { return }
        let keychain = shared.snapshot
        let changes = dirtyActivity.compactMap { keychain.activity(of: $0) }.map(KeychainChange.putActivity)
        do {
            try store.write { try $0.persist(changes) }
            dirtyActivity.removeAll()
            lastFlushMillis = nowMillis
            if activityFlushFailing { log.info("keychain: last-use times written again") }
            activityFlushFailing = false
        } catch {
            log.line(activityFlushFailing ? .debug : .info, "keychain: last-use times not written (kept for the next attempt): \(error)")
            activityFlushFailing = true
        }
    }

    /// Computes a change on a copy, writes rows and event together, then publishes the copy.
    private func commit(_ body: (inout Keychain) throws(FaultCode) -> ([KeychainChange], NewEvent?)) throws(FaultCode) {
        let store = self.store, log = self.log
        try shared.update { (keychain: inout Keychain) throws(FaultCode) -> Void in
            var copy = keychain
            let (changes, event) = try body(&copy)
            guard !changes.isEmpty || event != nil else { return }
            do {
                try store.write { transaction in
                    try transaction.persist(changes)
                    if let event { try transaction.appendEvent(event) }
                }
            } catch {
                log.info("keychain: change not stored, so not applied: \(error)")
                throw .internalError
            }
            keychain = copy
        }
    }
}
