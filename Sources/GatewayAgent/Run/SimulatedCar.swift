// Start-up and shut-down of the simulated car: self-test, store, identity, public state files,
// key directory, link server, then the loop.
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Drivers
import Protocol

struct AgentStartFailure: Error, CustomStringConvertible {
    let description: String
}

struct SimulatedCar {
    let options: RunOptions
    let log: AgentLog

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
        let clock = AgentClock()
        let store = try CarStore.open(stateDirectory: options.stateDirectory, clock: { clock.eventTime() })
        for repair in store.repairs { log.info("store: \(repair)") }
        let identity = try store.loadOrCreateIdentityKey()
        try StateFiles.write(identity: identity.publicKey, vehicleID: options.vehicleID, in: options.stateDirectory)
        clock.setTrustedMark(try store.trustedTime())

        let keys = SimulatedOwnerKeys.directory(options.simulatedOwners)
        let engine = CarProtocolEngine(configuration: CarProtocolConfiguration(vehicleID: options.vehicleID),
                                       identity: identity, keys: keys)
        let server = try SimulatedLinkServer(configuration: .init(socketPath: options.socketPath))
        let body = try VehicleBody(hardware: hardware, store: store, clock: clock, log: log)
        let service = CarService(engine: engine, server: server, actuator: body.actuator,
                                 audit: AuditSink(store: store, log: log), clock: clock, log: log)
        body.connect(service)
        let console = try ConsoleSetup.make(options: options, body: body, store: store, clock: clock, log: log)
        defer { console.console?.close() }

        let sample = clock.now()
        print("carkey-agent: crypto self-test passed")
        print("carkey-agent: clock \(sample.wallClockTrusted ? "trusted" : "not trusted") (\(trustNote(clock, sample)))")
        print("carkey-agent: \(options.simulatedOwners.count) simulated owner key(s): "
              + (options.simulatedOwners.isEmpty ? "none" : options.simulatedOwners.map { KeyID(publicKey: $0).description }.joined(separator: ", ")))
        print("carkey-agent: \(body.summary)")
        if let endpoint = console.console?.endpoint { print("carkey-agent: console on \(endpoint)") }
        print("carkey-agent: simulated car \(options.vehicleID) listening on \(options.socketPath)")
        fflush(nil) // tests and supervisors read these lines while the agent runs

        // The cloud link is optional: the car works fully offline.
        let cloud = try options.cloud.map { try AgentCloud(options: $0, vehicleID: options.vehicleID, store: store, clock: clock, log: log) }
        if let cloud {
            cloud.start(initialState: service.vehicleState)
            service.stateObserver = { cloud.report($0) }
            service.tickObserver = { for message in cloud.takeInbound() { log.info("cloud: \(message.type) message \(message.id) admitted (not acted on yet)") } }
        }
        if let cloud { console.context.cloudSnapshot = { cloud.snapshot } }
        defer { cloud?.stop() }
        defer { service.shutdown() }
        defer { body.finishRunning() }
        try AgentLoop(service: service, server: server, signals: signals, clock: clock, log: log, sources: body.sources + console.sources).run()
        return 0
    }

    private func trustNote(_ clock: AgentClock, _ sample: ProtocolTime) -> String {
        guard let mark = clock.trustedMark else { return "no trusted-time mark in the store" }
        return sample.wallClockTrusted ? "system clock at or after the trusted-time mark \(mark)"
                                       : "system clock is before the trusted-time mark \(mark)"
    }
}
