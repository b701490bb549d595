// The real radio: a DW3000 on /dev/spidevB.C (board file "uwb"), brought up at start and again
// every 30 s while it does not answer; one UWBRangingRunner per ranging link. A round never
// blocks the agent's loop: it is started, then carried on when the IRQ line's descriptor is
// readable (or by polling the status register each millisecond while it runs, without one).
import Drivers
import Protocol

final class DW3000Radio: UWBRadio {
    static let retryMillis: UInt64 = 30_000

    private let board: BoardUWB
    private let configuration: DW3000Configuration
    private let log: AgentLog
    private var spi: (any SPIDevice)?
    private let device: (any SPIDevice)?
    private let delay: any UWBDelay
    private var driver: DW3000Driver?
    private var interrupt: (any GPIOInputLine)?
    private var runners: [LinkID: UWBRangingRunner] = [:]
    private var lastError: String?
    /// The round on the chip now: one at a time, whatever the number of ranging links.
    private var pending: (link: LinkID, runner: UWBRangingRunner, deadline: UInt64)?
    private var lastServiceMillis: UInt64 = 0
    static let roundTimeoutMillis: UInt64 = 40
    private var retryAt: UInt64 = 0

    /// `device`/`delay`: the SPI device and bring-up delays to use instead of opening
    /// `board.spidev` (tests run this radio on a simulated chip).
    init(board: BoardUWB, interrupt: (any GPIOInputLine)?, log: AgentLog, device: (any SPIDevice)? = nil,
         delay: any UWBDelay = SleepingUWBDelay()) {
        self.board = board
        self.configuration = DW3000Configuration(board: board)
        self.interrupt = interrupt
        self.log = log
        self.device = device
        self.delay = delay
        bringUp(nowMillis: 0)
    }

    var isAvailable: Bool { driver?.chip != nil }

    var summary: String {
        if let chip = driver?.chip {
            return "\(chip) on \(board.spidev), channel \(board.channel), \(interrupt == nil ? "polled" : "interrupt line")"
        }
        return "not available on \(board.spidev): \(lastError ?? "not started")"
    }

    var snapshot: DW3000Snapshot? { driver?.snapshot }

    func open(_ grant: RangingGrant) {
        open(link: grant.link, material: grant.material)
    }

    /// The responder for `link` with the session's material (grants come only from the engine).
    func open(link: LinkID, material: RangingMaterial) {
        guard let driver else { return }
        runners[link] = UWBRangingRunner(driver: driver, role: DSTWRResponder(material: material), interruptLine: interrupt)
    }

    func close(_ link: LinkID) {
        runners[link] = nil
        if pending?.link == link {
            try? driver?.stop()
            pending = nil
        }
    }

    func startRound(for link: LinkID, nowMillis: UInt64) -> UWBRoundStart {
        guard let runner = runners[link] else { return .noSession }
        if let pending, pending.link != link { return .finished(.failed(.timeout)) }   // one round at a time
        do {
            try runner.startRound()
        } catch {
            note("ranging round failed: \(error)")
            return .finished(.failed(.receiveError))
        }
        // The responder's Poll window is one round interval; the round ends well inside it.
        pending = (link, runner, nowMillis + Self.roundTimeoutMillis)
        return .pending
    }

    var pollDescriptor: FileDescriptor? { pending == nil ? nil : interrupt?.edgeDescriptor }

    var pendingDeadline: UInt64? {
        guard let pending else { return nil }
        // Without an IRQ line the status register is polled every millisecond, only while a
        // round runs (a few milliseconds per round).
        return interrupt?.edgeDescriptor == nil ? min(pending.deadline, lastServiceMillis + 1) : pending.deadline
    }

    func service(nowMillis: UInt64) -> (link: LinkID, outcome: RangingOutcome)? {
        guard let current = pending else { return nil }
        lastServiceMillis = nowMillis
        do {
            let outcome = interrupt == nil ? try current.runner.poll() : try current.runner.interruptReadable()
            if let outcome {
                pending = nil
                return (current.link, outcome)
            }
        } catch {
            note("ranging round failed: \(error)")
            pending = nil
            return (current.link, .failed(.receiveError))
        }
        guard nowMillis >= current.deadline else { return nil }
        try? driver?.stop()
        pending = nil
        return (current.link, .failed(.timeout))
    }

    func housekeeping(nowMillis: UInt64) {
        if driver?.chip == nil, nowMillis >= retryAt { bringUp(nowMillis: nowMillis) }
    }

    private func bringUp(nowMillis: UInt64) {
        retryAt = nowMillis + Self.retryMillis
        do {
            let spi = try self.spi ?? device ?? SpidevDevice(path: board.spidev)
            self.spi = spi
            let driver = try self.driver ?? DW3000Driver(spi: spi, configuration: configuration, delay: delay)
            self.driver = driver
            let chip = try driver.bringUp()
            lastError = nil
            log.info("uwb: \(chip) up on \(board.spidev), channel \(board.channel)")
        } catch {
            note("\(error)")
        }
    }

    private func note(_ message: String) {
        if message != lastError { log.error("uwb: \(message); unlock and trunk are refused until it answers") }
        lastError = message
    }
}
