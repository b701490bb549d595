// --simulate-uwb: the car's DW3000 and, for each phone that sets up ranging, the phone's DW3000,
// all register-level simulated chips on one simulated air (Drivers/UWB/Simulated). The phone's
// chip runs the initiator role with the material of the phone's session: the simulator stands
// in for the phone's radio, which would derive the same material from its own session key
// (RangingEngineTests show both sides derive it). Where the phone is, and what an attacker does,
// is set from the console or `carkey-agent sim uwb ...`; the air's time follows the monotonic
// clock, so a walk at 1.2 m/s takes real seconds.
import Drivers
import Protocol

final class SimulatedUWBRadio: UWBRadio {
    private struct Phone {
        let chip: SimulatedDW3000
        let driver: DW3000Driver
        let runner: UWBRangingRunner
        let car: UWBRangingRunner
    }

    let air: SimulatedUWBAir
    private let carChip: SimulatedDW3000
    private let carDriver: DW3000Driver
    private let configuration: DW3000Configuration
    private let board: BoardUWB
    private var phones: [LinkID: Phone] = [:]
    private var startedAtMillis: UInt64?
    private var phoneCount = 0

    init(board: BoardUWB = BoardUWB(spidev: "/dev/spidev0.0"), seed: UInt64 = 1) throws {
        var channel = UWBChannelModel(distance: .fixed(metres: 20), timestampNoiseMetres: 0.05)
        channel.packetLossProbability = 0.01
        air = SimulatedUWBAir(seed: seed, channel: channel)
        configuration = DW3000Configuration(board: board)
        self.board = board
        carChip = air.addChip(name: "car", driftPPM: 12)
        carChip.traceCapacity = 0   // months of rounds: no register trace
        carDriver = try DW3000Driver(spi: carChip, configuration: configuration, delay: air.delay())
        _ = try carDriver.bringUp()
    }

    var isAvailable: Bool { carDriver.chip != nil }
    var summary: String { "simulated \(carDriver.chip.map { "\($0)" } ?? "DW3000") (--simulate-uwb), channel \(board.channel)" }
    var snapshot: DW3000Snapshot? { carDriver.snapshot }

    /// Where the simulated phone is: every phone chip follows this profile (air time, seconds).
    var distance: UWBDistanceProfile {
        get { air.channel.distance }
        set { air.channel.distance = newValue }
    }

    var attacks: [UWBAttack] {
        get { air.channel.attacks }
        set { air.channel.attacks = newValue }
    }

    /// Seconds on the air's clock now (for profiles that start "now").
    var nowSeconds: Double { air.nowSeconds }

    func open(_ grant: RangingGrant) {
        close(grant.link)
        phoneCount += 1
        let chip = air.addChip(name: "phone-\(phoneCount)", driftPPM: -15)
        chip.traceCapacity = 0
        do {
            let driver = try DW3000Driver(spi: chip, configuration: configuration, delay: air.delay())
            _ = try driver.bringUp()
            let phone = UWBRangingRunner(driver: driver, role: DSTWRInitiator(material: grant.material,
                                                                             txAntennaDelayUnits: configuration.txAntennaDelay))
            let car = UWBRangingRunner(driver: carDriver, role: DSTWRResponder(material: grant.material))
            phones[grant.link] = Phone(chip: chip, driver: driver, runner: phone, car: car)
        } catch {
            // A simulated chip that does not come up is a bug in the simulator set-up.
            phones[grant.link] = nil
        }
    }

    func close(_ link: LinkID) {
        phones[link] = nil
    }

    var pollDescriptor: FileDescriptor? { nil }
    var pendingDeadline: UInt64? { nil }
    func service(nowMillis: UInt64) -> (link: LinkID, outcome: RangingOutcome)? { nil }

    func startRound(for link: LinkID, nowMillis: UInt64) -> UWBRoundStart {
        guard let outcome = round(for: link, nowMillis: nowMillis) else { return .noSession }
        return .finished(outcome)
    }

    /// One whole round in virtual time (a few milliseconds of air time, no real waiting).
    private func round(for link: LinkID, nowMillis: UInt64) -> RangingOutcome? {
        guard let phone = phones[link] else { return nil }
        catchUp(nowMillis: nowMillis)
        air.connect(phone.car, to: carChip)
        air.connect(phone.runner, to: phone.chip)
        do {
            try phone.car.startRound()
            try phone.runner.startRound()
        } catch {
            return .failed(.receiveError)
        }
        // A round is a few milliseconds of air time; the limit only guards against a bug.
        air.runUntilIdle(limit: 10_000)
        if phone.car.isRunning { try? carDriver.stop(); return .failed(.timeout) }
        return phone.car.lastOutcome ?? .failed(.timeout)
    }

    func housekeeping(nowMillis: UInt64) {
        catchUp(nowMillis: nowMillis)
    }

    /// The air's clock follows the agent's monotonic clock (never backwards).
    private func catchUp(nowMillis: UInt64) {
        guard let started = startedAtMillis else { startedAtMillis = nowMillis; return }
        let target = Double(nowMillis &- started) / 1000
        if target > air.nowSeconds { air.advance(byMicros: (target - air.nowSeconds) * 1_000_000) }
    }
}
