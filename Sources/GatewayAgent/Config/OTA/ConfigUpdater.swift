// Applies signed configuration documents from vehicles/{id}/config/desired (docs/cloud.md
// "Configuration (desired/reported)"): verify, refuse forbidden keys, schema-check the merged
// file, install it atomically with a last-good copy, apply what can change live, run the
// health checks, roll back on failure; then one transaction records the version, an event and
// the retained report. Runs on the agent's thread.
import Drivers
import Protocol

final class ConfigUpdater {
    let files: ConfigFileSet
    private let vehicleID: VehicleID
    private let signers: any RemoteSignerDirectory
    private let store: CarStore
    /// nil: no cloud link (documents still apply; nothing is reported).
    private let topics: CloudTopics?
    private let now: () -> EventTime
    var live: LiveSettings
    var healthChecks: [ConfigHealthCheck]
    private let log: AgentLog
    /// Crash tests only: stop an install after this step, as a power cut there would.
    var stopAfter: ConfigFileSet.Step?

    init(configPath: String, vehicleID: VehicleID, signers: any RemoteSignerDirectory, store: CarStore, topics: CloudTopics?,
         now: @escaping () -> EventTime, live: LiveSettings = LiveSettings(), healthChecks: [ConfigHealthCheck] = [], log: AgentLog) {
        files = ConfigFileSet(path: configPath)
        self.vehicleID = vehicleID
        self.signers = signers
        self.store = store
        self.topics = topics
        self.now = now
        self.live = live
        self.healthChecks = healthChecks
        self.log = log
    }

    /// The hook for CloudInboundHandler.configHandler.
    func handle(_ message: InboundEnvelope) {
        _ = handle(document: message.body, requestID: message.id)
    }

    /// Reports an apply that a crash interrupted (ConfigRecovery ran before the config was read).
    func reportRecovery(_ recovered: ConfigRecovery.Outcome) {
        let inForce = (try? store.read { try ConfigVersionRecord.load($0) })?.inForceVersion ?? 0
        let outcome = ConfigOutcome(result: .rolledBack, version: recovered.version, inForce: inForce, reason: "interrupted",
                                    detail: "the apply was interrupted; last-good restored at start")
        record(outcome, requestID: nil, update: nil)
    }

    @discardableResult
    func handle(document bytes: Bytes, requestID: String?) -> ConfigOutcome {
        let state: ConfigVersionRecord
        do { state = try store.read { try ConfigVersionRecord.load($0) } } catch {
            return finish(ConfigOutcome(result: .refused, inForce: 0, reason: "internalError", detail: "version record unreadable", fault: .internalError),
                          requestID: requestID, update: nil)
        }
        // A retained document comes again on every reconnect: the same bytes are not news.
        if SHA256.hash(bytes) == state.handledDigest {
            log.debug("config: document \(state.handledVersion) already handled")
            return ConfigOutcome(result: .ignored, version: state.handledVersion, inForce: state.inForceVersion)
        }
        let time = now()
        let verified: VerifiedConfig
        do throws(SignedConfigError) {
            verified = try SignedConfigVerifier.verify(bytes, vehicleID: vehicleID, signers: signers, now: time.seconds,
                                                       timeTrusted: time.trusted, currentVersion: state.handledVersion)
        } catch {
            let version = (try? SignedConfig.decode(bytes))?.version
            return finish(ConfigOutcome(result: .refused, version: version, inForce: state.inForceVersion, reason: error.name,
                                        detail: error.description, fault: error.fault), requestID: requestID, update: nil)
        }
        // From here the document is authentic and fresh: whatever its outcome, its version is
        // used up (the next must be newer) and its digest remembered.
        var update = state
        update.handledVersion = verified.document.version
        update.handledDigest = verified.digest
        var outcome = apply(verified, inForce: state.inForceVersion)
        outcome.signer = verified.document.signerKeyID.description
        if outcome.result == .applied { update.inForceVersion = verified.document.version }
        outcome.inForce = update.inForceVersion
        return finish(outcome, requestID: requestID, update: update)
    }

    private func apply(_ verified: VerifiedConfig, inForce: UInt64) -> ConfigOutcome {
        let version = verified.document.version
        func refused(_ reason: String, key: String? = nil, _ detail: String) -> ConfigOutcome {
            ConfigOutcome(result: .refused, version: version, inForce: inForce, reason: reason, key: key, detail: detail)
        }
        guard case .success(let document) = JSONTree.decode(verified.document.payload), case .object = document else {
            return refused("schemaInvalid", "the payload is not a JSON object")
        }
        if let key = ConfigKeyPolicy.firstForbidden(in: document) {
            return refused("forbiddenKey", key: key, "key '\(key)' may not be set from the cloud")
        }
        let oldBytes: [UInt8]
        let oldTree: JSONTree
        let oldConfig: AgentConfig
        let baseDirectory = ConfigPaths.directory(of: files.path)
        do {
            oldBytes = try files.readCurrent()
            oldTree = try JSONTree.parseConfig(oldBytes)
            oldConfig = try AgentConfig.parse(oldBytes, baseDirectory: baseDirectory)
        } catch {
            return refused("localConfigUnreadable", "\(files.path): \(error)")
        }
        let mergedTree = ConfigMerge.merge(current: oldTree, document: document)
        let newBytes = ConfigFileEncoding.encode(mergedTree)
        let newConfig: AgentConfig
        do throws(ConfigError) {
            newConfig = try AgentConfig.parse(newBytes, baseDirectory: baseDirectory)
        } catch {
            return refused("schemaInvalid", key: error.key, error.description)
        }
        // Defence in depth: whatever the merge did, what the policy protects must not move.
        for key in ConfigKeyPolicy.forbidden where ConfigMerge.lookup(key.split(separator: ".").map(String.init), in: oldTree)
            != ConfigMerge.lookup(key.split(separator: ".").map(String.init), in: mergedTree) {
            return refused("forbiddenKey", key: key, "key '\(key)' may not be changed from the cloud")
        }
        let changed = ConfigDiff.changedKeys(oldTree, mergedTree)
        guard !changed.isEmpty else {
            return ConfigOutcome(result: .applied, version: version, inForce: version)
        }
        do {
            try files.install(new: newBytes, old: oldBytes, version: version, stopAfter: stopAfter)
        } catch {
            try? files.rollBack()
            return ConfigOutcome(result: .refused, version: version, inForce: inForce, reason: "writeFailed", detail: "\(error)")
        }
        if stopAfter != nil { return ConfigOutcome(result: .ignored, version: version, inForce: inForce, reason: "stopped") }
        let split: (live: [String], atNextStart: [String])
        do {
            split = try live.apply(newConfig, changed: changed)
        } catch {
            return rollBack(version: version, inForce: inForce, oldConfig: oldConfig, changed: changed,
                            reason: "liveApplyFailed", detail: "\(error)")
        }
        for check in healthChecks {
            if let problem = check.run() {
                return rollBack(version: version, inForce: inForce, oldConfig: oldConfig, changed: changed,
                                reason: "healthCheckFailed", detail: "\(check.name): \(problem)")
            }
        }
        do {
            try files.commit()
        } catch {
            return rollBack(version: version, inForce: inForce, oldConfig: oldConfig, changed: changed,
                            reason: "writeFailed", detail: "\(error)")
        }
        return ConfigOutcome(result: .applied, version: version, inForce: version, live: split.live, atNextStart: split.atNextStart)
    }

    private func rollBack(version: UInt64, inForce: UInt64, oldConfig: AgentConfig, changed: [String],
                          reason: String, detail: String) -> ConfigOutcome {
        var detail = detail
        do { try files.rollBack() } catch { detail += "; restoring last-good failed: \(error)" }
        // Best effort: the running parts go back to what the restored file says.
        do { _ = try live.apply(oldConfig, changed: changed) } catch { detail += "; live settings not restored: \(error)" }
        return ConfigOutcome(result: .rolledBack, version: version, inForce: inForce, reason: reason, detail: detail)
    }

    private func finish(_ outcome: ConfigOutcome, requestID: String?, update: ConfigVersionRecord?) -> ConfigOutcome {
        if outcome.result == .ignored { return outcome }
        record(outcome, requestID: requestID, update: update)
        return outcome
    }

    /// One transaction: the version record, the event and the retained report.
    private func record(_ outcome: ConfigOutcome, requestID: String?, update: ConfigVersionRecord?) {
        let time = now()
        let summary = "config: version \(outcome.version.map(String.init) ?? "?") \(outcome.result.rawValue)"
            + (outcome.reason.map { " (\($0)\(outcome.key.map { " '\($0)'" } ?? ""))" } ?? "")
        outcome.result == .applied ? log.info(summary) : log.warn(summary)
        do {
            try store.write { transaction in
                if let update { try update.save(transaction) }
                if let requestID { _ = try transaction.markInboundSeen(requestID) }
                _ = try transaction.appendEvent(outcome.event(time: time))
                if let topics { try transaction.enqueueConfigReport(outcome.reportFields, topics: topics, time: time) }
            }
        } catch {
            log.error("config: outcome of version \(outcome.version.map(String.init) ?? "?") not recorded: \(error)")
        }
    }
}

enum ConfigDiff {
    /// Leaf keys whose value differs between two config trees (added, removed or changed).
    static func changedKeys(_ old: JSONTree, _ new: JSONTree) -> [String] {
        let keys = Set(ConfigKeyPolicy.leafKeys(old) + ConfigKeyPolicy.leafKeys(new))
        return keys.sorted().filter { key in
            let path = key.split(separator: ".").map(String.init)
            return ConfigMerge.lookup(path, in: old) != ConfigMerge.lookup(path, in: new)
        }
    }
}
