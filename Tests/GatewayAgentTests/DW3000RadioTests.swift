// The agent's real-radio path (DW3000Radio) on a register-level simulated chip: a round is
// started, left pending (the loop is not blocked), and finished by servicing the chip; a round
// nobody answers times out; a chip that does not answer makes the radio unavailable.
import XCTest
@testable import carkey_agent
import Drivers
import Protocol

final class DW3000RadioTests: XCTestCase {
    func testARoundIsPendingUntilTheChipIsServicedThenGivesTheRange() throws {
        let air = SimulatedUWBAir(seed: 3, channel: UWBChannelModel(distance: .fixed(metres: 2.0), timestampNoiseMetres: 0.01))
        let carChip = air.addChip(name: "car", driftPPM: 10)
        let phoneChip = air.addChip(name: "phone", driftPPM: -10)
        let board = BoardUWB(spidev: "/dev/spidev0.0")
        let radio = DW3000Radio(board: board, interrupt: nil, log: AgentLog(prefix: "test"), device: carChip, delay: air.delay())
        XCTAssertTrue(radio.isAvailable, radio.summary)

        let setup = try RangingSetup(sessionID: 0x0102_0304, roundIntervalMillis: 50)
        let material = RangingMaterial(rangingKey: Bytes(repeating: 0x5A, count: 32), setup: setup)
        let link = LinkID(4)
        radio.open(link: link, material: material)
        let phoneDriver = try DW3000Driver(spi: phoneChip, configuration: DW3000Configuration(board: board), delay: air.delay())
        _ = try phoneDriver.bringUp()
        let phone = UWBRangingRunner(driver: phoneDriver, role: DSTWRInitiator(material: material, txAntennaDelayUnits: board.txAntennaDelay))
        air.connect(phone, to: phoneChip)

        XCTAssertEqual(radio.startRound(for: link, nowMillis: 1000), .pending, "the loop goes on while the chip works")
        XCTAssertNil(radio.pollDescriptor, "no IRQ line: polled")
        XCTAssertEqual(radio.pendingDeadline, 1, "without an IRQ line the status register is polled at once, then each millisecond")
        XCTAssertNil(radio.service(nowMillis: 1000), "nothing received yet")
        try phone.startRound()
        // The agent's loop services the car's chip when it raises its IRQ (here: polled when the
        // line goes up), in time to send the Response within the reply delay.
        var finished: (link: LinkID, outcome: RangingOutcome)?
        var steps = 0
        while finished == nil, steps < 100_000 {
            steps += 1
            if carChip.irqAsserted { finished = radio.service(nowMillis: 1001) }
            guard air.step() else { break }
        }
        if finished == nil { finished = radio.service(nowMillis: 1002) }
        let (done, outcome) = try XCTUnwrap(finished)
        XCTAssertEqual(done, link)
        guard case .range(let range) = outcome else { return XCTFail("\(outcome)") }
        XCTAssertEqual(range.distanceMetres, 2.0, accuracy: 0.1)
        XCTAssertNil(radio.pendingDeadline, "nothing pending after the round")
    }

    func testARoundNobodyAnswersTimesOutWithoutBlocking() throws {
        let air = SimulatedUWBAir(seed: 4)
        let carChip = air.addChip(name: "car")
        let board = BoardUWB(spidev: "/dev/spidev0.0")
        let radio = DW3000Radio(board: board, interrupt: nil, log: AgentLog(prefix: "test"), device: carChip, delay: air.delay())
        let setup = try RangingSetup(sessionID: 9, roundIntervalMillis: 50)
        let link = LinkID(1)
        radio.open(link: link, material: RangingMaterial(rangingKey: Bytes(repeating: 1, count: 32), setup: setup))
        XCTAssertEqual(radio.startRound(for: link, nowMillis: 5000), .pending)
        XCTAssertNil(radio.service(nowMillis: 5010))
        let (_, outcome) = try XCTUnwrap(radio.service(nowMillis: 5000 + DW3000Radio.roundTimeoutMillis))
        XCTAssertEqual(outcome, .failed(.timeout))
        XCTAssertEqual(radio.startRound(for: LinkID(2), nowMillis: 6000), .noSession)
    }

    func testAChipThatDoesNotAnswerIsNotAvailable() throws {
        let air = SimulatedUWBAir(seed: 5)
        let carChip = air.addChip(name: "car")
        carChip.faults = [.noChip]
        let radio = DW3000Radio(board: BoardUWB(spidev: "/dev/spidev0.0"), interrupt: nil, log: AgentLog(prefix: "test"),
                                device: carChip, delay: air.delay())
        XCTAssertFalse(radio.isAvailable)
        XCTAssertTrue(radio.summary.contains("not available on /dev/spidev0.0"), radio.summary)
    }
}
