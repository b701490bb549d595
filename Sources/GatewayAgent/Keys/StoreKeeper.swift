// The store budget in the agent: one bounded maintenance round per housekeeping tick (pruning
// in batches, the reserve, a full disk noticed), and one log line per thing an operator should
// know. The events the budget writes (prune, disk full) are written by the store itself.
#if canImport(Glibc)
import Glibc
#endif
import Drivers
import Protocol

final class StoreKeeper {
    private let store: CarStore
    private let log: AgentLog

    init(store: CarStore, log: AgentLog) {
        self.store = store
        self.log = log
    }

    /// What opening the store did on the way (a full disk, the reserve released or created),
    /// and the budget in force: stdout, with the other start-up lines.
    func startupLines(_ budget: StoreBudget) -> [String] {
        var lines = store.startNotices.map { "carkey-agent: store: \($0)" }
        if !store.schemaRepairs.isEmpty {
            lines.append("carkey-agent: store: storeRepaired: recreated missing \(store.schemaRepairs.joined(separator: ", ")) (rows they held are lost; event logged)")
        }
        if let status = try? store.spaceStatus() {
            lines.append("carkey-agent: store: \(status.usedBytes >> 10) KiB of \(budget.maxDatabaseBytes >> 10) KiB budget in use, "
                         + "events kept \(budget.maxEventAgeSeconds / 86_400) days (access decisions \(budget.maxCriticalEventAgeSeconds / 86_400)), "
                         + (status.reservePresent ? "reserve \(budget.reserveBytes >> 10) KiB in place" : "no reserve file")
                         + (status.diskFull ? ", DISK FULL" : ""))
        }
        return lines
    }

    /// Opens the agent's store; a damaged or foreign carkey.db stops the start with what
    /// happened and how to recover (SQLite's bare "malformed" says neither).
    /// `vault`: the configured device vault (issue 18), nil for the storage.key file.
    static func openStore(_ directory: String, clock: @escaping CarStore.EventClock, budget: StoreBudget,
                          vault: (any CarKeyVault)? = nil) throws -> CarStore {
        // No storage key, yet the public identity of a car is published here: the key was lost
        // (with the store, or the store would refuse it). Not a fresh directory, so not a new
        // car; checked before opening, which would mint a new key.
        let layout = StateDirectory(path: directory)
        let published = layout.path + "/" + StateFiles.identityFileName
        if vault == nil, let sealedBy = VaultFiles.deviceSealing(directory), (try? Files.mode(of: layout.storageKeyPath)) == nil {
            throw AgentStartFailure(description: "store: \(directory) is sealed by a \(sealedBy) key vault, but the config names none "
                                    + "(vault.provider is file): set the config's \"vault\" object back to \(sealedBy). Refusing to start.")
        }
        if vault == nil, (try? Files.mode(of: layout.storageKeyPath)) == nil, (try? Files.mode(of: published)) != nil {
            throw AgentStartFailure(description: "store: \(layout.storageKeyPath) is missing, but \(published) shows a car was paired here: "
                                    + "its storage key was lost. Refusing to start as a new car, which would lock out every paired phone. "
                                    + "Put the car's storage key back, then restore its backup if the store is gone too. " + recovery(directory))
        }
        // A vault with no storage key of its own beside a store that holds data: the car was
        // never migrated (or lost the vault files). Refused before the vault mints a key, which
        // would write its files and still not open the store.
        if let vault, VaultFiles.deviceSealing(directory) != vault.kind, holdsData(layout) {
            throw AgentStartFailure(description: "store: \(StorageError.storageKeyDoesNotOpenStore(provider: vault.kind, stateDirectory: directory)). Refusing to start.")
        }
        do {
            return try CarStore.open(stateDirectory: directory, keyProvider: vault, clock: clock, budget: budget)
        } catch {
            switch error {
            case .external where vault != nil:
                // The vault's SecureKeyError (a foreign blob, a removed device): its fix.
                throw AgentStartFailure(description: AgentVault.describe(error))
            case .storageKeyDoesNotOpenStore:
                throw AgentStartFailure(description: "store: \(error). Refusing to start.")
            case .sqlite(let cause) where cause.isCorrupt:
                throw AgentStartFailure(description: "store: \(directory)/\(StateDirectory.databaseFileName) is damaged (\(cause)). "
                                        + "Refusing to start. " + recovery(directory))
            case .migration(let cause):
                throw AgentStartFailure(description: "store: \(cause). Refusing to start. " + recovery(directory))
            default:
                throw error
            }
        }
    }

    /// Whether carkey.db or its WAL holds anything: a store a new key cannot open. An empty
    /// file is what a first start that stopped early leaves.
    private static func holdsData(_ layout: StateDirectory) -> Bool {
        [layout.databasePath, layout.databasePath + "-wal"].contains { path in
            var info = stat()
            return stat(path, &info) == 0 && info.st_size > 0
        }
    }

    /// What to do when the store cannot be used as it is: restore, or start over explicitly.
    static func recovery(_ directory: String) -> String {
        "Restore a backup with `carkey-agent restore --state-dir \(directory) --from FILE` "
            + "(the backup must be of this car's store; the storage key file must be restored together with the store), "
            + "or, to start over as a new car that every phone must enroll with again, move \(directory) aside and start with an empty state directory"
    }

    /// The car's identity key for start-up. Created only in a fresh state directory; a store
    /// that lost it, or one whose row does not open with this storage key, stops the start
    /// with what happened and how to recover: never a new identity in silence.
    func identityKey(vault: (any CarKeyVault)? = nil) throws -> any ProtocolKeyAgreement {
        let directory = store.stateDirectory.path
        let recovery = Self.recovery(directory)
        do {
            if let vault { return try store.loadOrCreateIdentity(vault: vault) }
            return try store.loadOrCreateIdentityKey()
        } catch let error as SecureKeyError {
            throw AgentStartFailure(description: AgentVault.describe(error))
        } catch let error as StorageError {
            switch error {
            case .identityMissing:
                throw AgentStartFailure(description: "store: \(error). Refusing to start as a new car, which would lock out every paired phone. " + recovery)
            case .tampered(kind: .identity, _):
                throw AgentStartFailure(description: "store: the car identity in \(directory) does not open with \(store.stateDirectory.storageKeyPath) "
                                        + "(the row was altered, or the store and the key file come from different cars). Refusing to start. " + recovery)
            default:
                throw error
            }
        }
    }

    /// The clean stop, after every writer has finished: the WAL copied into carkey.db and
    /// truncated, the database closed, so carkey.db alone holds the car (a cold copy of it is
    /// complete). A checkpoint another reader held up is logged: the WAL still has commits.
    func closeAtStop() {
        do {
            let result = try store.checkpointAndClose()
            if result.busy {
                log.warn("store: checkpoint at stop incomplete (another process reads the store): carkey.db-wal still holds \(result.walFrames - result.checkpointedFrames) frame(s)")
            } else if !result.truncated {
                log.info("store: WAL checkpointed into \(StateDirectory.databaseFileName), store closed; the WAL file keeps its room for a start on this full disk")
            } else {
                // TRUNCATE reports 0 frames once the WAL is emptied: there is no count to show.
                // The routine case of every clean stop: not worth a journal line.
                log.debug("store: WAL checkpointed into \(StateDirectory.databaseFileName) and truncated, store closed")
            }
        } catch {
            log.error("store: checkpoint at stop failed: \(error)")
        }
    }

    func tick(now: ProtocolTime) {
        let notices = store.maintainBudget(now: EventTime(seconds: now.wallSeconds, trusted: now.wallClockTrusted),
                                           nowMillis: now.monotonicMillis)
        for notice in notices {
            switch notice {
            case .diskFull, .reserveReleased, .reserveNotCreated: log.warn("store: \(notice)")
            default: log.info("store: \(notice)")
            }
        }
    }
}
