// The real radio: a DW3000 on /dev/spidevB.C (board file "uwb"), brought up at start and again
// every 30 s while it does not answer; one UWBRangingRunner per ranging link, run to the end of
// its round on the agent's thread (a round is a few milliseconds: reply delay plus jitter).
import Drivers
import Protocol

final class DW3000Radio: UWBRadio {
    static let retryMillis: UInt64 = 30_000

    private let board: BoardUWB
    private let configuration: DW3000Configuration
    private let log: AgentLog
    private var spi: SpidevDevice?
    private var driver: DW3000Driver?
    private var interrupt: (any GPIOInputLine)?
    private var runners: [LinkID: UWBRangingRunner] = [:]
    private var lastError: String?
    private var retryAt: UInt64 = 0

    init(board: BoardUWB, interrupt: (any GPIOInputLine)?, log: AgentLog) {
        self.board = board
        self.configuration = DW3000Configuration(board: board)
        self.interrupt = interrupt
        self.log = log
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
        guard let driver else { return }
        runners[grant.link] = UWBRangingRunner(
            driver: driver, role: DSTWRResponder(material: grant.material), interruptLine: interrupt)
    }

    func close(_ link: LinkID) {
        runners[link] = nil
    }

    func round(for link: LinkID, nowMillis: UInt64) -> RangingOutcome? {
        guard let runner = runners[link] else { return nil }
        do {
            // Bounded by the poll window the responder opens (at most the round interval).
            return try runner.runRound(timeoutMillis: 25)
        } catch {
            note("ranging round failed: \(error)")
            return .failed(.receiveError)
        }
    }

    func housekeeping(nowMillis: UInt64) {
        if driver?.chip == nil, nowMillis >= retryAt { bringUp(nowMillis: nowMillis) }
    }

    private func bringUp(nowMillis: UInt64) {
        retryAt = nowMillis + Self.retryMillis
        do {
            let device = try spi ?? SpidevDevice(path: board.spidev)
            spi = device
            let driver = try self.driver ?? DW3000Driver(spi: device, configuration: configuration)
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
