// The car's persistent state: one SQLite database in the state directory holding sealed
// records, the audit log and the trusted-time mark. Open it once per process and share it
// (it is Sendable; one connection behind a lock serialises all access).
#if canImport(Glibc)
import Glibc
#endif
import CSQLite
import Protocol
import Synchronization

public final class CarStore: Sendable {
    /// The time stamped on events the store raises itself (tamper, repairs).
    public typealias EventClock = @Sendable () -> EventTime

    public let stateDirectory: StateDirectory
    public let database: Database
    /// Permissions fixed while opening (also appended to the log as `storage` events).
    public let repairs: [PermissionRepair]
    /// Internal (not private) for `resealAll`, the vault migration.
    let sealer: RecordSealer
    private let random: RandomSource
    private let clock: EventClock
    /// Routes appended events into the outbox (installed by the cloud link).
    private let router = Mutex<(any EventRouter)?>(nil)
    /// Told when a committed write added outbox rows (installed by the cloud link).
    private let outboxObserver = Mutex<(any OutboxObserver)?>(nil)
    /// Tamper findings already reported by this process (see `TamperFinding`).
    private let reported = Mutex<Set<TamperFinding>>([])
    /// The budget keeper; nil for tools that open the store without a budget.
    let space: StoreSpace?
    /// What the budget did while opening (a full disk, the reserve), for the start-up log.
    public let startNotices: [StoreNotice]
    /// Whether this open found a fresh state directory, the only place a new car identity may
    /// be created (see `loadOrCreateIdentityKey`): with the default key file, the storage key
    /// did not exist yet; with another key provider, the database had no schema yet.
    public let isFreshStateDirectory: Bool
    /// The default key file, promoted from provisional once the identity is stored.
    let fileKey: FileKeyProvider?
    /// Schema objects (tables, triggers, indexes) that were missing and recreated while opening.
    public let schemaRepairs: [String]

    /// Opens or creates the store in `stateDirectory`.
    /// - keyProvider: nil uses `FileKeyProvider` on DIR/storage.key, allowed to create the key
    ///   only while the database holds no sealed records.
    /// - clock: stamps the store's own events; the default is the system wall clock marked
    ///   untrusted (the agent passes its trusted-time source).
    /// - budget: bounds the file and keeps the reserve (the agent); nil leaves both alone.
    /// Throws `StorageError`: layout, permissions and key problems directly, a schema newer
    /// than this code or a foreign file as `.migration`, SQLite's refusals as `.sqlite`.
    public static func open(stateDirectory path: String, keyProvider: KeyProvider? = nil,
                            clock: EventClock? = nil, random: RandomSource = SystemRandom(),
                            budget: StoreBudget? = nil) throws(StorageError) -> CarStore { try StorageError.wrap {
            let directory = StateDirectory(path: path)
            var repairs = try directory.prepare()
            // A key vault's key before anything else is written: a device that refuses (another
            // board's TPM, changed PCRs) stops the open with the state directory untouched. Had
            // SQLite opened first, it would already have rewritten carkey.db-shm.
            let vaultKey = keyProvider is any CarKeyVault ? try keyProvider?.storageKey() : nil
            // On a full disk the reserve is released before SQLite needs room for its WAL.
            let space = budget.map { StoreSpace(budget: $0, directory: directory) }
            let startNotices = space?.prepareForStart() ?? []
            // Decided before anything below can create the key: a key file that was already there
            // means this car has an identity somewhere, even if the database lost it.
            let keyFileExisted = keyProvider == nil && access(directory.storageKeyPath, F_OK) == 0
            try directory.setUpNewDatabaseFile()
            let database = try Database(path: directory.databasePath, create: false)
            // Every process, tools too: the last one to close must not delete the WAL and its index,
            // whose room a later start on a full disk needs (StoreSpace).
            database.keepWALBetweenRuns()
            try space?.configure(database)
            let versionFound = try database.migrate(to: StoreSchema.schema)
            // A table or trigger dropped behind our back (an events table gone leaves access
            // decisions unrecorded): recreated from the schema, and recorded below.
            let schemaRepairs = versionFound == 0 ? [] : try StoreSchemaRepair.repair(database, schema: StoreSchema.schema)
            // SQLite has now created the WAL and SHM files: check them too.
            repairs += try directory.checkDatabaseFiles()
            let fileKey = keyProvider == nil
                ? FileKeyProvider(path: directory.storageKeyPath, mayCreate: try !Self.holdsSealedRecords(database), random: random)
                : nil
            guard let provider: KeyProvider = keyProvider ?? fileKey else { throw StorageError.storageKeyMissing(path: directory.storageKeyPath) }
            // The sealer keeps the key for the store's lifetime (it is needed for every read).
            let key = try vaultKey ?? provider.storageKey()
            // A key vault makes a storage key wherever its blob is missing, so a store that
            // already holds records is checked against the key it got: a new key would read
            // every record as tampered (issue 18).
            // (Other providers keep the old behaviour: each record reads as tampered.)
            if let vault = keyProvider as? any CarKeyVault, try !Self.keyOpensRecords(database, key: key) {
                throw StorageError.storageKeyDoesNotOpenStore(provider: vault.kind, stateDirectory: directory.path)
            }
            let store = try CarStore(directory: directory, database: database, repairs: repairs,
                                     sealer: RecordSealer(key: key), random: random, clock: clock ?? Self.untrustedWallClock,
                                     space: space, startNotices: startNotices,
                                     isFreshStateDirectory: keyProvider == nil ? !keyFileExisted : versionFound == 0,
                                     schemaRepairs: schemaRepairs, fileKey: fileKey)
            if !schemaRepairs.isEmpty {
                try store.write { transaction in
                    _ = try transaction.appendEvent(store.schemaRepairEvent(schemaRepairs))
                }
            }
            if !repairs.isEmpty {
                try store.write { transaction in
                    for repair in repairs {
                        try transaction.appendEvent(store.storageEvent(action: .repairPermissions, detail: [
                            ("path", repair.path), ("from", String(repair.oldMode, radix: 8)), ("to", String(repair.newMode, radix: 8)),
                        ]))
                    }
                }
            }
            return store
        }
    }

    private init(directory: StateDirectory, database: Database, repairs: [PermissionRepair],
                 sealer: RecordSealer, random: RandomSource, clock: @escaping EventClock,
                 space: StoreSpace?, startNotices: [StoreNotice], isFreshStateDirectory: Bool, schemaRepairs: [String],
                 fileKey: FileKeyProvider?) {
        self.fileKey = fileKey
        self.isFreshStateDirectory = isFreshStateDirectory
        self.schemaRepairs = schemaRepairs
        self.space = space
        self.startNotices = startNotices
        self.stateDirectory = directory
        self.database = database
        self.repairs = repairs
        self.sealer = sealer
        self.random = random
        self.clock = clock
    }

    // MARK: Transactions

    /// Runs `body` in one write transaction: everything it does commits together or not at all.
    /// Tampered records met inside are reported as events afterwards, even if `body` throws.
    /// After SQLITE_FULL the store makes room and runs `body` again (a rolled-back attempt
    /// changed nothing), so `body` must only act through the transaction.
    public func write<T>(_ body: (StoreTransaction) throws -> T) throws -> T {
        try run(writing: true, body)
    }

    /// Runs `body` against one consistent snapshot. Use `write` for anything that changes data.
    public func read<T>(_ body: (StoreTransaction) throws -> T) throws -> T {
        try run(writing: false, body)
    }

    /// A write that fails with SQLITE_FULL (disk or page cap) is retried after the budget made
    /// room: pruning for any write, the reserve as well for a security-critical one.
    /// SQLITE_FULL, raw from the SQLite layer or wrapped by a transaction's typed API.
    private static func isDiskFull(_ error: any Error) -> Bool {
        let sqlite = error as? SQLiteError ?? (error as? StorageError)?.sqliteError
        return sqlite?.primaryCode == SQLITE_FULL
    }

    private func run<T>(writing: Bool, _ body: (StoreTransaction) throws -> T) throws -> T {
        var step = 0
        while true {
            var critical = false
            do {
                let result = try attempt(writing: writing, critical: &critical, body)
                // The cap lifted for this write goes back at once: nothing else may use it.
                if step > 1 { space?.restoreCap(database) }
                return result
            } catch where writing && Self.isDiskFull(error) {
                guard let space, space.makeRoom(self, step: step, critical: critical) else { throw error }
                step += 1
            }
        }
    }

    private func attempt<T>(writing: Bool, critical: inout Bool, _ body: (StoreTransaction) throws -> T) throws -> T {
        var findings = [TamperFinding]()
        var enqueued = false
        let result: T
        do {
            let step = { (connection: Connection) throws -> T in
                let store = StoreTransaction(connection: connection, sealer: self.sealer, random: self.random,
                                             router: self.currentRouter())
                defer { findings = store.findings; critical = store.securityCritical; enqueued = store.enqueuedOutbox }
                return try body(store)
            }
            result = writing ? try database.transaction(step) : try database.read(step)
            if enqueued { notifyOutbox() }
        } catch {
            // Report, but the caller's error is the one that matters (often `.tampered` itself).
            try? report(findings)
            throw error
        }
        try report(findings)
        return result
    }

    /// Appends one "tamper detected" event per finding not yet reported by this process.
    private func report(_ findings: [TamperFinding]) throws {
        let fresh = reported.withLock { seen in findings.filter { !seen.contains($0) } }
        guard !fresh.isEmpty else { return }
        let route = currentRouter()
        let enqueued = try database.transaction { connection in
            let transaction = StoreTransaction(connection: connection, sealer: sealer, random: random, router: route)
            for finding in Set(fresh) {
                _ = try transaction.appendEvent(NewEvent(
                    kind: .tamper, time: clock(), action: .openSealedRecord, result: "tamper detected",
                    fault: EventFault(name: "recordTampered"),
                    detailJSON: JSONText.object([("recordKind", finding.kind.rawValue), ("recordID", finding.id.hexString)])))
            }
            return transaction.enqueuedOutbox
        }
        if enqueued { notifyOutbox() }
        reported.withLock { $0.formUnion(fresh) }
    }

    /// Installs (or removes, nil) the observer told after each committed write that added
    /// outbox rows.
    public func observeOutbox(_ observer: (any OutboxObserver)?) {
        outboxObserver.withLock { $0 = observer }
    }

    private func notifyOutbox() {
        outboxObserver.withLock { $0 }?.outboxEnqueued()
    }

    /// From now on every appended event also goes into the outbox as `route(event)` says
    /// (nil: not published), in the same transaction. Pass nil to stop routing.
    /// Events appended while nothing routed them (start-up repairs and tamper findings, a run
    /// without the cloud) are queued first, in sequence order, so none is left without its row.
    public func routeEvents(_ route: (any EventRouter)?) throws(StorageError) { try StorageError.wrap {
            guard let route else {
                router.withLock { $0 = nil }
                return
            }
            try database.transaction { connection in
                let transaction = StoreTransaction(connection: connection, sealer: sealer, random: random, router: route)
                try transaction.routeUnroutedEvents()
                // Installed under the write lock: no event of this process falls between the two.
                router.withLock { $0 = route }
            }
        }
    }

    /// The router in force (read once per transaction); internal for the regression test that
    /// reads it a million times (see EventRouter.swift for why it is not a closure).
    func currentRouter() -> (any EventRouter)? { router.withLock { $0 } }

    /// A write for the budget itself: no retry ladder (it is what the ladder calls).
    func maintenanceWrite<T>(_ body: (StoreTransaction) throws -> T) throws -> T {
        try database.transaction { connection in
            try body(StoreTransaction(connection: connection, sealer: sealer, random: random, router: currentRouter()))
        }
    }

    func storageEvent(action: EventAction, detail: [(String, String)], totalsJSON: String? = nil, result: String = "ok") -> NewEvent {
        var json = JSONText.object(detail)
        if let totalsJSON { json = String(json.dropLast()) + #","pruned":"# + totalsJSON + "}" }
        return NewEvent(kind: .storage, time: clock(), action: action, result: result, detailJSON: json)
    }

    /// Whether `key` opens the store's identity-kind rows (the identity and the advertising
    /// key, written at the first start); true when there are none yet.
    private static func keyOpensRecords(_ database: Database, key: Bytes) throws -> Bool {
        let sealer = try RecordSealer(key: key)
        return try database.read { connection in
            let statement = try connection.prepare("SELECT id, sealed FROM sealed_records WHERE kind = ?1 ORDER BY id LIMIT 1")
                .bind([.text(RecordKind.identity.rawValue)])
            guard try statement.step(), case .blob(let sealed) = statement.value(1) else { return true }
            return (try? sealer.open(sealed, kind: .identity, id: statement.blob(0) ?? [])) != nil
        }
    }

    static func holdsSealedRecords(_ database: Database) throws -> Bool {
        try database.read { try $0.scalar("SELECT EXISTS (SELECT 1 FROM sealed_records)") } == .integer(1)
    }

    private static let untrustedWallClock: EventClock = {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return EventTime(seconds: Int64(spec.tv_sec), trusted: false)
    }
}
