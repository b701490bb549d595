// Start-up and shut-down of the car: self-test, store, identity, public state files, key
// directory, the phone link (Unix-socket simulator or BlueZ, LinkBackend), then the loop.
#if canImport(Glibc)
import Glibc
#endif
import CommandLineKit
import Drivers
import Protocol

struct AgentStartFailure: ExitStatusError, CustomStringConvertible {
    let description: String
    /// 1, or `AgentVault.doNotRetryStatus` when a restart could only make things worse.
    var exitStatus: Int32 = 1
}

struct CarAgent {
    let options: RunOptions
    let log: AgentLog
    /// An OTA configuration apply a crash interrupted, rolled back before the config was read.
    var recoveredConfig: ConfigRecovery.Outcome? = nil

    func run() throws -> Int32 {
        let failed = CryptoSelfTest.run().filter { !$0.passed }.map(\.name)
        guard failed.isEmpty else {
            throw AgentStartFailure(description: "crypto self-test failed (\(failed.joined(separator: "; "))); refusing to start")
        }
        // Signals first: from here on SIGINT/SIGTERM are bytes to poll, never a kill mid-write.
        let signals = try SignalPipe.install()
        LogLevel.threshold = options.config.logLevel
        options.config.warnings().forEach { log.warn($0) }
        // GPIO next: every output is pinned at its inactive (safe) level before anything else.
        let hardware = try VehicleHardware.open(boardFile: options.config.boardFile, simulate: options.simulate, clock: SystemClock())
        defer { hardware.lines.releaseAll() }
        let clock = AgentClock(systemSynchronized: options.keys.syncProbe)
        try BenchmarkHooks.apply(log: log)
        // The key vault before the store (issue 18): a missing or locked device stops here, with
        // nothing written. It lives as long as the run (the identity signs through it).
        let vault: (any CarKeyVault)?
        do { vault = try AgentVault.open(options.config.vault, stateDirectory: options.stateDirectory) } catch {
            throw AgentStartFailure(description: error.description, exitStatus: error.refusedAccess ? AgentVault.doNotRetryStatus : 1)
        }
        // A TPM that stops answering at run time: one line naming it and the cause, one when
        // it is back (the vault reconnects itself); the sessions in between are refused.
        (vault as? TPM2KeyVault)?.onConnectionChange { [log] line in log.error(line) }
        (vault as? PKCS11KeyVault)?.onConnectionChange { [log] line in log.error(line) }
        // Closed last, after the store: a clean stop ends with TPM2_Shutdown (TPM2KeyVault.close).
        defer { vault?.close() }
        // With its budget: on a full disk the reserve is released before SQLite needs room.
        let store = try StoreKeeper.openStore(options.stateDirectory, clock: { clock.eventTime() }, budget: options.store, vault: vault)
        let storeKeeper = StoreKeeper(store: store, log: log)
        // Runs last, after every writer has stopped: copy the WAL into carkey.db, truncate it and
        // close, so a stopped agent's database file holds everything on its own.
        defer { storeKeeper.closeAtStop() }
        for repair in store.repairs { log.info("store: \(repair)") }
        let identity = try storeKeeper.identityKey(vault: vault)
        try StateFiles.write(identity: identity.publicKey, vehicleID: options.vehicleID, in: options.stateDirectory)
        clock.setTrustedMark(try store.trustedTime())

        let keys = try KeyService.load(store: store, capacity: options.keys.keySlots, clock: clock, log: log)
        keys.storeKeeper = storeKeeper
        var engineConfiguration = options.keys.engineConfiguration(vehicleID: options.vehicleID)
        // UWB: a DW3000 on spidev from the board file, or the simulated module. With one the
        // engine accepts rangingSetup for what the chip is configured for.
        let uwbRadio = try UWBStartup.radio(options: options, hardware: hardware, log: log)
        if let uwbRadio { engineConfiguration.uwb = UWBService.capabilities(for: uwbRadio.board) }
        // Granted to each newly enrolled owner phone (protocol.md 18.12); never logged.
        engineConfiguration.advertisingKey = try store.loadOrCreateAdvertisingKey()
        // A device identity may sign 1000x slower than software: the car-wide handshake
        // budget follows its measured signing time (VaultSignBudget says why).
        var vaultBudgetLine: String?
        if vault != nil {
            let standard = engineConfiguration.handshakeBudgetCarWide
            let signMillis: Double
            do { signMillis = try VaultSignBudget.measure(identity) } catch {
                throw AgentStartFailure(description: AgentVault.describe(error))
            }
            engineConfiguration.handshakeBudgetCarWide = VaultSignBudget.carWide(signMillis: signMillis, standard: standard)
            vaultBudgetLine = VaultSignBudget.startupLine(signMillis: signMillis, budget: engineConfiguration.handshakeBudgetCarWide,
                                                          standard: standard)
        }
        let engine = CarProtocolEngine(configuration: engineConfiguration,
                                       identity: identity, keys: keys.directory, certificateVerifier: keys.certificateVerifier)
        let server = try LinkBackend.open(options, store: store, clock: clock, log: log)
        defer { server.shutdown() }
        let body = try VehicleBody(hardware: hardware, store: store, clock: clock, log: log)
        let service = CarService(engine: engine, server: server, actuator: body.actuator, keys: keys,
                                 audit: AuditSink(writer: store, log: log,
                                                  coalescer: AuditSettings.coalescer(perMinute: options.auditRoutinePerMinute)), clock: clock, log: log)
        body.connect(service)
        service.handshakeDeadlineMillis = UInt64(options.link.handshakeDeadlineSeconds) * 1000
        if options.conformance {
            service.conformance = ConformanceMonitor(configuration: engineConfiguration,
                                                     handshakeDeadlineMillis: service.handshakeDeadlineMillis, log: log)
        }
        // Signed audit-chain checkpoints (docs/cloud.md): looked at every 15 s on the tick, and
        // one last on a clean stop, after the final events and before the cloud link drains.
        let checkpointer = AuditCheckpointer(store: store, key: identity, topics: CloudTopics(vehicleID: options.vehicleID.description),
                                             clock: { clock.eventTime() })
        // systemd (Type=notify): READY once phones are served, WATCHDOG on the tick, STOPPING.
        let notifier = ServiceNotifier()
        var ticks = 0
        service.tickObserver = {
            notifier.watchdog(nowMillis: clock.monotonicMillis)
            ticks += 1
            guard ticks % 15 == 0 else { return }
            do { try checkpointer.tick(nowMillis: Int64(clock.monotonicMillis)) } catch { log.error("audit: checkpoint not written: \(error)") }
        }
        let commands = ControlCommands(car: service, keys: keys, clock: clock, vehicleID: options.vehicleID)
        commands.conformance = service.conformance
        commands.checkpoint = {
            do {
                guard let written = try checkpointer.now(nowMillis: Int64(clock.monotonicMillis)) else {
                    return .failure("no events yet: there is no chain head to sign")
                }
                log.info("audit: checkpoint at seq \(written.seq) written on request")
                return .ok(["checkpoint seq \(written.seq) head \(written.headHash.hexString)"])
            } catch {
                log.error("audit: checkpoint not written: \(error)")
                return .failure("checkpoint not written: \(error)")
            }
        }
        commands.stats = try AgentStats(store: store)
        commands.stats?.commitCounters = service
        let control = try ControlServer(stateDirectory: options.stateDirectory, log: log, commands: commands)
        defer { control.shutdown() }
        let uwb = uwbRadio.map { UWBStartup.service($0, settings: options.config.proximity, store: store, clock: clock, log: log, service: service, server: server, body: body) }
        let console = try ConsoleSetup.make(options: options, body: body, store: store, clock: clock, log: log,
                                            uwb: uwb, simulatedUWB: uwbRadio?.radio as? SimulatedUWBRadio)
        defer { console.console?.close() }
        commands.stats?.consoleOutput = console.console
        console.context.wire(commands)
        commands.simulation = console.simulation.map { simulation in { words in simulation.run(words) } }
        let signers = RemoteSetup.signers(keys: keys, store: store, options: options, clock: clock, log: log)
        console.context.serviceSigners = signers
        console.context.auditStats = { [unowned service] in service.auditStats }
        console.context.linkSnapshot = { [unowned service] in service.linkSnapshot }

        log.startup("carkey-agent: crypto self-test passed")
        log.startup(AgentVault.startupLine(vault, stateDirectory: options.stateDirectory))
        if let vaultBudgetLine { log.startup(vaultBudgetLine) }
        KeysStartupReport.print(clock: clock, sync: options.keys.clockSync, simulate: options.simulate, keys: keys, log: log)
        storeKeeper.startupLines(options.store).forEach { log.startup($0) }
        log.startup("carkey-agent: \(body.summary)")
        if let endpoint = console.console?.endpoint { log.startup("carkey-agent: console on \(endpoint)") }
        log.startup("carkey-agent: " + LinkBackend.startupLine(server, options: options))
        if let uwb { log.startup("carkey-agent: uwb: \(uwb.radio.summary)") }
        if options.conformance { log.startup("carkey-agent: " + ConformanceMonitor.startupLine) }
        log.startup("carkey-agent: control socket \(control.socketPath)")

        // The cloud link is optional: the car works fully offline.
        let cloud = try options.cloud.map { try AgentCloud(options: $0, vehicleID: options.vehicleID, store: store, clock: clock, log: log) }
        var cloudSources: [any LoopSource] = []
        if let cloud {
            try cloud.start(initialState: service.vehicleState)
            service.stateObserver = { cloud.report($0) }
            uwb?.onZoneChanged = { [unowned service] zone, metres in cloud.report(service.vehicleState, proximity: (zone, metres)) }
            let inbound = RemoteSetup.inboundHandler(cloud: cloud, service: service, keys: keys, signers: signers, body: body, store: store,
                                                     options: options, console: console.context, clock: clock, log: log,
                                                     uwb: uwb, recoveredConfig: recoveredConfig)
            cloudSources.append(CloudInboundSource(cloud: cloud, handler: inbound))
            if let remote = inbound.remote { cloudSources.append(remote) }
        }
        if let cloud { console.context.cloudSnapshot = { cloud.snapshot } }
        commands.stats?.cloud = cloud
        commands.stats?.cloudInbound = cloud
        defer { cloud?.stop() }
        defer {
            do { try checkpointer.shutdown(nowMillis: Int64(clock.monotonicMillis)) } catch { log.error("audit: last checkpoint not written: \(error)") }
        }
        defer { service.shutdown() }
        defer { body.finishRunning() }
        notifier.ready(status: "car \(options.vehicleID): " + LinkBackend.startupLine(server, options: options))
        // The journal's view of READY=1: the line operators (and the README) wait for, since
        // systemd keeps the notification itself out of the log.
        log.info("ready: " + LinkBackend.startupLine(server, options: options))
        defer { notifier.stopping() }
        try AgentLoop(service: service, server: server, signals: signals, clock: clock, log: log,
                      sources: body.sources + console.sources + [control] + cloudSources + (uwb.map { [$0] } ?? [])).run()
        return 0
    }
}
