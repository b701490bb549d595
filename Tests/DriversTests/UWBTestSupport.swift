// Shared set-up for the DW3000/UWB tests: simulated chips on a seeded air, drivers brought up
// against them, and a hand-written 3-message DS-TWR pair of roles (the real roles live in
// Protocol/Ranging; these exist only to exercise the driver and the simulator).
import XCTest
@testable import Drivers
import Protocol

enum UWBFixture {
    /// A quiet channel: no noise, no loss, unless a test asks.
    static func air(seed: UInt64 = 1, metres: Double = 1.5, noise: Double = 0) -> SimulatedUWBAir {
        SimulatedUWBAir(seed: seed, channel: UWBChannelModel(distance: .fixed(metres: metres), timestampNoiseMetres: noise))
    }

    static func driver(on air: SimulatedUWBAir, name: String, driftPPM: Double = 0, startUnits: UInt64 = 0,
                       configuration: DW3000Configuration = DW3000Configuration(),
                       file: StaticString = #filePath, line: UInt = #line) throws -> (SimulatedDW3000, DW3000Driver) {
        let chip = air.addChip(name: name, driftPPM: driftPPM, startUnits: startUnits)
        let driver = try DW3000Driver(spi: chip, configuration: configuration, delay: air.delay())
        try driver.bringUp()
        XCTAssertEqual(chip.protocolErrors, [], "bring-up misused the chip", file: file, line: line)
        return (chip, driver)
    }

    static let key: [UInt8] = Array(0x10...0x1F)
    static func iv(round: UInt32) -> [UInt8] {
        Array(0xA0...0xAB) + [UInt8(round >> 24), UInt8(round >> 16 & 0xFF), UInt8(round >> 8 & 0xFF), UInt8(round & 0xFF)]
    }

    static func units(micros: Double) -> UInt64 { UInt64(micros * UWBTimestamp.unitsPerMicrosecond) }
}

/// Little-endian 40-bit timestamps packed into a test Final message.
private func pack(_ stamps: [UWBTimestamp]) -> [UInt8] { stamps.flatMap(\.littleEndianBytes) }
private func unpack(_ bytes: [UInt8]) -> [UWBTimestamp] {
    stride(from: 0, to: bytes.count - 4, by: 5).map { UWBTimestamp(littleEndian: bytes[$0..<$0 + 5])! }
}

/// The car side of the test exchange: Poll now, Final at a delayed time carrying its stamps.
struct TestInitiator: RangingRole {
    var round: UInt32 = 0
    var key = UWBFixture.key
    var txAntennaDelay: UInt16 = 16385
    var finalDelayMicros = 500.0
    var windowMicros: UInt32 = 3000
    var pollTX: UWBTimestamp?
    var responseRX: UWBTimestamp?
    var sentFinal = false

    mutating func startRound() -> [RangingAction] {
        round += 1
        pollTX = nil
        responseRX = nil
        sentFinal = false
        return [.loadSTS(key: key, iv: UWBFixture.iv(round: round)), .transmit(payload: [0x61, UInt8(round & 0xFF)], at: nil, thenReceiveTimeoutMicros: windowMicros)]
    }

    mutating func handle(_ event: RangingEvent) -> [RangingAction] {
        switch event {
        case .transmitted(let stamp):
            if pollTX == nil { pollTX = stamp; return [] }
            return [.finished(.completed)]
        case .received(let payload, let stamp, _, _):
            guard payload.first == 0x62, let pollTX, !sentFinal else { return [.finished(.failed(.unexpectedFrame))] }
            responseRX = stamp
            let at = stamp.adding(units: UWBFixture.units(micros: finalDelayMicros))
            let finalTX = DW3000Driver.transmitTime(at: at, txAntennaDelay: txAntennaDelay)
            sentFinal = true
            return [.transmit(payload: [0x63] + pack([pollTX, stamp, finalTX]), at: at, thenReceiveTimeoutMicros: nil)]
        case .receiveTimeout: return [.finished(.failed(.timeout))]
        case .receiveError: return [.finished(.failed(.receiveError))]
        case .transmitTooLate: return [.finished(.failed(.lateTransmit))]
        }
    }
}

/// The phone side: answer a Poll after a fixed delay, compute the DS-TWR range from Final.
struct TestResponder: RangingRole {
    var round: UInt32 = 0
    var key = UWBFixture.key
    var replyDelayMicros = 900.0
    var windowMicros: UInt32 = 3000
    var pollRX: UWBTimestamp?
    var responseTX: UWBTimestamp?
    var lowestQuality = 1.0
    var allValid = true

    mutating func startRound() -> [RangingAction] {
        round += 1
        pollRX = nil
        responseTX = nil
        lowestQuality = 1
        allValid = true
        return [.loadSTS(key: key, iv: UWBFixture.iv(round: round)), .receive(timeoutMicros: 0)]
    }

    mutating func handle(_ event: RangingEvent) -> [RangingAction] {
        switch event {
        case .transmitted(let stamp):
            responseTX = stamp
            return []
        case .received(let payload, let stamp, let quality, let valid):
            lowestQuality = min(lowestQuality, quality)
            allValid = allValid && valid
            if payload.first == 0x61 && pollRX == nil {
                pollRX = stamp
                let at = stamp.adding(units: UWBFixture.units(micros: replyDelayMicros))
                return [.transmit(payload: [0x62], at: at, thenReceiveTimeoutMicros: windowMicros)]
            }
            guard payload.first == 0x63, payload.count == 16, let pollRX, let responseTX else {
                return [.finished(.failed(.unexpectedFrame))]
            }
            let stamps = unpack(Array(payload.dropFirst()))
            let (pollTX, responseRX, finalTX) = (stamps[0], stamps[1], stamps[2])
            let ra = Double(responseRX.units(since: pollTX)), da = Double(finalTX.units(since: responseRX))
            let rb = Double(stamp.units(since: responseTX)), db = Double(responseTX.units(since: pollRX))
            let tof = (ra * rb - da * db) / (ra + rb + da + db)
            return [.finished(.range(RangeMeasurement(round: round, timeOfFlightUnits: tof, stsQuality: lowestQuality)))]
        case .receiveTimeout: return [.finished(.failed(.timeout))]
        case .receiveError: return [.finished(.failed(.receiveError))]
        case .transmitTooLate: return [.finished(.failed(.lateTransmit))]
        }
    }
}

/// Chip time as a `MonotonicClock` whose sleep lets the air run (for `runRound` in tests).
final class AirClock: MonotonicClock, @unchecked Sendable {
    let air: SimulatedUWBAir
    init(air: SimulatedUWBAir) { self.air = air }
    func nowMillis() -> UInt64 { air.nowPicoseconds / 1_000_000_000 }
    func sleep(millis: UInt64) { air.advance(byMicros: Double(millis) * 1000) }
}

/// A car (initiator) and a phone (responder) on one air, each with a runner on its IRQ line.
final class UWBRangingPair {
    let air: SimulatedUWBAir
    let carChip: SimulatedDW3000, phoneChip: SimulatedDW3000
    let car: DW3000Driver, phone: DW3000Driver
    let initiator: UWBRangingRunner, responder: UWBRangingRunner

    init(air: SimulatedUWBAir, carDrift: Double = 20, phoneDrift: Double = -20, carStart: UInt64 = 0,
         phoneStart: UInt64 = 0x12_3456_789A, configuration: DW3000Configuration = DW3000Configuration()) throws {
        self.air = air
        (carChip, car) = try UWBFixture.driver(on: air, name: "car", driftPPM: carDrift, startUnits: carStart, configuration: configuration)
        (phoneChip, phone) = try UWBFixture.driver(on: air, name: "phone", driftPPM: phoneDrift, startUnits: phoneStart,
                                                   configuration: configuration)
        initiator = UWBRangingRunner(driver: car, role: TestInitiator(txAntennaDelay: configuration.txAntennaDelay))
        responder = UWBRangingRunner(driver: phone, role: TestResponder())
        air.connect(initiator, to: carChip)
        air.connect(responder, to: phoneChip)
    }

    /// One round: the phone listens, the car polls, the air runs until both are done.
    func round() throws -> RangingOutcome? {
        try responder.startRound()
        try initiator.startRound()
        air.runUntilIdle()
        XCTAssertEqual(air.runnerErrors, [])
        XCTAssertFalse(initiator.isRunning)
        // A responder still listening (the car gave up) is stopped for the next round.
        if responder.isRunning { try phone.stop() }
        air.advance(byMicros: 100_000)
        return responder.isRunning ? nil : responder.lastOutcome
    }

    /// Distances of `count` rounds (nil for a round without a range) and their STS quality.
    func rounds(_ count: Int) throws -> [(metres: Double, quality: Double)?] {
        try (0..<count).map { _ in
            guard case .range(let m)? = try round() else { return nil }
            return (m.distanceMetres, m.stsQuality)
        }
    }
}
