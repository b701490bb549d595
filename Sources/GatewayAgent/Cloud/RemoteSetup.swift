// Start-up wiring of the cloud's inbound path: the handler, and with it the remote-command
// service (signers from the keychain and the config's fleet keys, completions from the
// actuator, service mode from the console). One call from CarAgent.
import Drivers
import Protocol

enum RemoteSetup {
    /// Who may sign remote objects and service challenges: the keychain's owners and shares, the
    /// config's fleet keys and those enrolled from the cloud. Built once at start-up, also
    /// without a cloud link (the console's signed service challenge needs it offline).
    static func signers(keys: KeyService, store: CarStore, options: RunOptions, clock: AgentClock, log: AgentLog) -> RemoteSigners {
        let stored: [StoredFleetKey]
        do { stored = try FleetKeyStore.load(store) } catch {
            log.warn("remote: stored fleet keys unreadable (only the config's are used): \(error)")
            stored = []
        }
        let signers = RemoteSigners(keychain: keys.keychain.shared, fleetKeys: options.config.remote.fleetKeys, stored: stored)
        signers.now = { let sample = clock.now(); return (sample.wallSeconds, sample.wallClockTrusted) }
        return signers
    }

    static func inboundHandler(cloud: AgentCloud, service: CarService, keys: KeyService, signers: RemoteSigners, body: VehicleBody,
                               store: CarStore, options: RunOptions, console: ConsoleContext?, clock: AgentClock, log: AgentLog,
                               uwb: UWBService? = nil, recoveredConfig: ConfigRecovery.Outcome? = nil) -> CloudInboundHandler {
        let settings = options.config.remote
        let remote = RemoteCommandService(cloud: cloud, store: store, actuator: body.actuator, signers: signers, settings: settings,
                                          vehicleID: options.vehicleID, clock: clock, log: log)
        remote.serviceModeActive = console.map { context in { context.serviceModeActive?() ?? false } }
        remote.stateObserver = { [unowned service] state in service.stateObserver?(state) }
        body.completions.onRemote = { [unowned remote] actuation, commandID, outcome in
            remote.finished(actuation, commandID: commandID, outcome: outcome)
        }
        log.info("remote: commands on \(CloudTopics(vehicleID: options.vehicleID.description).remoteCommands); unlock "
                 + (settings.allowUnlock ? "allowed" : "off") + ", auto-relock "
                 + (settings.autoRelockSeconds > 0 ? "\(settings.autoRelockSeconds) s" : "off")
                 + ", \(signers.fleetKeyCount) fleet key(s)")
        var handler = CloudInboundHandler(cloud: cloud, service: service, keys: keys, log: log)
        handler.remote = remote
        handler.eventResend = EventResend(cloud: cloud, router: EventPayload.router(CloudTopics(vehicleID: options.vehicleID.description)),
                                          clock: clock, log: log)
        handler.fleetKeys = FleetKeyService(cloud: cloud, signers: signers, vehicleID: options.vehicleID, clock: clock, log: log)
        handler.revocationList = RevocationListService(cloud: cloud, service: service, keys: keys, store: store,
                                                       vehicleID: options.vehicleID, clock: clock, log: log)
        handler.configHandler = configUpdater(cloud: cloud, signers: signers, remote: remote, uwb: uwb, body: body, store: store,
                                              options: options, recovered: recoveredConfig, clock: clock, log: log)
        return handler
    }

    /// OTA configuration (docs/cloud.md, "Configuration"): only with a config file to rewrite.
    private static func configUpdater(cloud: AgentCloud, signers: RemoteSigners, remote: RemoteCommandService, uwb: UWBService?,
                                      body: VehicleBody, store: CarStore, options: RunOptions, recovered: ConfigRecovery.Outcome?,
                                      clock: AgentClock, log: AgentLog) -> ((InboundEnvelope) -> Void)? {
        guard let path = options.config.sourcePath else {
            log.info("config: no config file, so configuration documents from the cloud are refused (nothing to rewrite)")
            return nil
        }
        let live = LiveSettings([
            LiveSettingHandler(keys: ["remote.allowUnlock", "remote.autoRelockSeconds"]) { [unowned remote] config in
                remote.settings.allowUnlock = config.remote.allowUnlock
                remote.settings.autoRelockSeconds = config.remote.autoRelockSeconds
            },
            LiveSettingHandler(keys: ["proximity"]) { config in uwb?.reconfigure(config.proximity) },
        ])
        let checks = [
            ConfigHealthCheck(name: "protocol self-test") { CryptoSelfTest.run().first { !$0.passed }.map { "\($0.name) failed" } },
            ConfigHealthCheck(name: "cloud link") { cloud.snapshot.connected ? nil : "not connected" },
            ConfigHealthCheck(name: "GPIO") { [unowned body] in body.actuator.latchedReason.map { "actuators disabled: \($0)" } },
        ]
        let updater = ConfigUpdater(configPath: path, vehicleID: options.vehicleID, signers: signers, store: store,
                                    topics: CloudTopics(vehicleID: options.vehicleID.description), now: { clock.eventTime() },
                                    live: live, healthChecks: checks, log: log)
        if let recovered { updater.reportRecovery(recovered) }
        return { updater.handle($0) }
    }
}
