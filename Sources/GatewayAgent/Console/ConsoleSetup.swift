// Builds the console at start-up: the context, the command groups (sim only with the simulated
// chip), the transport, and the paths by which results reach it later (service pulses that
// ended, the pairing code after a long press of the pairing button).
import Drivers
import Protocol

struct ConsoleSetup {
    let context: ConsoleContext
    /// nil with `--console none`.
    let console: AgentConsole?
    /// The `sim` group (only with the simulated chip), also reachable through the control socket.
    let simulation: SimulationCommands?

    var sources: [any LoopSource] { console.map { [$0] } ?? [] }

    static func make(options: RunOptions, body: VehicleBody, store: CarStore, clock: AgentClock, log: AgentLog,
                     uwb: UWBService? = nil, simulatedUWB: SimulatedUWBRadio? = nil) throws -> ConsoleSetup {
        let config = options.config
        let context = ConsoleContext(config: config, vehicleID: options.vehicleID, cloudOptions: options.cloud, body: body, store: store, clock: clock, log: log)
        let service = ServiceCommands(context: context)
        var groups: [any ConsoleCommandGroup] = [
            InfoCommands(context: context),
            StatusCommand(context: context, serviceRemaining: { service.remainingMillis }),
            GPIOCommands(context: context),
            service,
            KeyCommands(context: context),
            LinkCommands(context: context),
        ]
        if let uwb {
            groups.append(UWBCommands(uwb: uwb, clock: clock))
            context.proximityLine = { [unowned uwb] in UWBCommands.proximityLine(uwb, nowMillis: clock.monotonicMillis) }
        }
        let simulation = body.hardware.simulated.map { SimulationCommands(chip: $0, uwb: simulatedUWB) }
        if let simulation { groups.append(simulation) }

        let console = try AgentConsole.open(config.consoleDevice ?? .none, baud: config.consoleBaud,
                                            commands: ConsoleCommands(groups: groups), clock: clock, log: log)
        context.endpoint = console?.endpoint ?? "none"
        // Weak captures: the console holds the groups that hold the context, and the body lives
        // as long as the context; strong ones would make cycles that outlive the run.
        context.notify = { [weak console] lines in console?.notify(lines) }
        context.consoleDroppedLines = { [weak console] in console?.droppedLines ?? 0 }
        body.completions.onServiceTest = { [weak context, weak service] actuation, outcome in
            guard let context, let service else { return }
            context.notify(service.finished(actuation, outcome))
        }
        context.serviceModeActive = { [weak service] in (service?.remainingMillis ?? 0) > 0 }
        body.sampler.onPairingRequested = { [weak context] in
            guard let context else { return }
            pairingButton(context)
        }
        // The keys hooks (pair, keys, pairing window state) are set by the start-up code:
        // ConsoleContext.wire(ControlCommands), the same commands as DIR/control.sock.
        return ConsoleSetup(context: context, console: console, simulation: simulation)
    }

    /// The pairing button's long press: the same window as `pair`, its code shown on the
    /// console (the only place that proves physical presence besides the button itself).
    private static func pairingButton(_ context: ConsoleContext) {
        guard let open = context.openPairingWindow else {
            context.log.warn("pairing button: pairing is not wired into this agent yet (owner enrollment, issue #4)")
            return
        }
        switch open() {
        case .success(let code):
            guard context.endpoint != "none" else {
                context.log.warn("pairing button: window open, but there is no console to show the code on")
                return
            }
            context.log.info("pairing button: pairing window opened (code shown on the console only)")
            context.notify(["pairing button: pairing window open, code \(String(decoding: code.digits, as: UTF8.self))"])
        case .failure(let fault):
            context.log.warn("pairing button: window not opened: \(fault.name)")
        }
    }
}
