// Start-up of the UWB part: which radio (the board file's DW3000 on spidev, or --simulate-uwb)
// and the service wired into the car service, the actuator and the inputs.
import Drivers
import Protocol

enum UWBStartup {
    struct Radio {
        let radio: any UWBRadio
        /// The radio settings the engine may accept (the board's, or the defaults when simulated).
        let board: BoardUWB
    }

    static func radio(options: RunOptions, hardware: VehicleHardware, log: AgentLog) throws -> Radio? {
        if options.simulateUWB {
            let board = hardware.board.uwb ?? BoardUWB(spidev: "/dev/spidev0.0")
            do {
                return Radio(radio: try SimulatedUWBRadio(board: board), board: board)
            } catch {
                throw AgentStartFailure(description: "uwb: the simulated module did not come up: \(error)")
            }
        }
        guard let board = hardware.board.uwb else { return nil }
        // A chip that does not answer is not a reason to stop the car: lock still works, and
        // unlock is refused until the chip answers (DW3000Radio retries every 30 s).
        return Radio(radio: DW3000Radio(board: board, interrupt: hardware.uwbInterrupt, log: log), board: board)
    }

    static func service(_ radio: Radio, settings: ProximitySettings, store: CarStore, clock: AgentClock, log: AgentLog,
                        service: CarService, server: any LinkServer, body: VehicleBody) -> UWBService {
        let events = ProximityEvents(store: store, clock: clock, log: log)
        events.beforeWrite = { [unowned service] in service.commitPendingRows() }
        let uwb = UWBService(radio: radio.radio, configuration: settings.configuration, events: events, log: log)
        uwb.passiveEntryEnabled = settings.passiveEntry
        uwb.walkAwayEnabled = settings.walkAwaySeconds > 0
        uwb.rssi = { [unowned server] link in server.facts(of: link)?.rssi }
        service.uwb = uwb
        service.automaticActuation = { [unowned body] actuation, key, reason in
            if let refused = body.actuator.startAutomatic(actuation, key: key, reason: reason) {
                log.info("uwb: \(reason) not started: \(refused.summary)")
            }
        }
        body.completions.onAutomatic = { [unowned service] actuation, _, reason, outcome in
            log.info("uwb: \(reason): \(outcome.summary), result \(outcome.fault?.name ?? "ok"), state \(outcome.state)")
            service.stateObserver?(outcome.state)
        }
        body.sampler.onDoorHandle = { [unowned service] in service.doorHandlePulled() }
        return uwb
    }
}
