// The two DS-TWR roles driven against each other by an ideal radio: the distance comes out,
// and every way a round can go wrong ends it without a range.
import XCTest
@testable import Protocol

final class RangingRoleTests: XCTestCase {
    func testRolesMeasureTheDistance() {
        for metres in [0.3, 1.5, 7.0, 40.0] {
            var (initiator, responder) = RangingFixtures.pair()
            let radio = IdealRadio(metres: metres)
            let round = radio.run(&initiator, &responder)
            XCTAssertEqual(round.initiator, .completed)
            let measurement = try? XCTUnwrap(round.responder?.measurement, "\(String(describing: round.responder))")
            XCTAssertEqual(measurement?.distanceMetres ?? -99, metres, accuracy: 0.01, "\(metres) m")
            XCTAssertEqual(measurement?.round, 1)
            XCTAssertEqual(measurement?.stsQuality ?? 0, 0.8, accuracy: 1e-9, "the lowest quality of the round")
        }
    }

    func testLargeDriftAndBothCountersWrapping() {
        var (initiator, responder) = RangingFixtures.pair()
        var radio = IdealRadio(metres: 2.0, ppmInitiator: -40, ppmResponder: 35)
        radio.offsetInitiator = UWBTimestamp.modulus - 30_000_000
        let measurement = radio.run(&initiator, &responder).responder?.measurement
        XCTAssertEqual(measurement?.distanceMetres ?? -99, 2.0, accuracy: 0.01)
    }

    func testRoundsIncreaseAndEachUsesItsOwnIV() {
        var (initiator, responder) = RangingFixtures.pair()
        let radio = IdealRadio()
        var ivs: Set<Bytes> = []
        for expected in UInt32(1)...5 {
            XCTAssertEqual(initiator.nextRound, expected)
            let round = radio.run(&initiator, &responder, start: Double(expected) * 0.1)
            XCTAssertEqual(round.responder?.measurement?.round, expected)
            ivs.insert(RangingFixtures.material.stsIV(round: expected))
        }
        XCTAssertEqual(ivs.count, 5)
        XCTAssertEqual(responder.nextRound, 6)
    }

    func testJitterDiffersPerRoundAndStaysWithinItsBound() {
        var (initiator, responder) = RangingFixtures.pair()
        let radio = IdealRadio()
        let setup = RangingFixtures.setup
        let base = RangingTiming.replyUnits(setup)
        let bound = UInt64(Double(setup.replyJitterMicros) * UWBTimestamp.unitsPerMicrosecond)
        var responderJitter: [UInt64] = [], initiatorJitter: [UInt64] = []
        for n in 0..<40 {
            let round = radio.run(&initiator, &responder, start: Double(n) * 0.1)
            XCTAssertNotNil(round.responder?.measurement)
            responderJitter.append(try! XCTUnwrap(round.responderReplyUnits) - base)
            initiatorJitter.append(try! XCTUnwrap(round.initiatorReplyUnits) - base)
        }
        for jitter in responderJitter + initiatorJitter { XCTAssertLessThanOrEqual(jitter, bound) }
        XCTAssertEqual(Set(responderJitter).count, 40, "a fresh draw every round")
        XCTAssertEqual(Set(initiatorJitter).count, 40)
        XCTAssertNotEqual(responderJitter, initiatorJitter, "each side draws its own")
        // Spread over the range, not clustered at one end.
        XCTAssertLessThan(responderJitter.min()!, bound / 4)
        XCTAssertGreaterThan(responderJitter.max()!, bound * 3 / 4)
    }

    func testLostFramesTimeOut() {
        for lost in 0..<3 {
            var (initiator, responder) = RangingFixtures.pair()
            var radio = IdealRadio()
            radio.alter = { index, bytes in index == lost ? nil : bytes }
            let round = radio.run(&initiator, &responder)
            XCTAssertEqual(round.responder, .failed(.timeout), "frame \(lost) lost")
            XCTAssertEqual(round.initiator, lost == 2 ? .completed : .failed(.timeout), "frame \(lost) lost")
        }
    }

    func testTamperedTagsAreRejected() {
        for frame in 0..<3 {
            var (initiator, responder) = RangingFixtures.pair()
            var radio = IdealRadio()
            radio.alter = { index, bytes in
                guard index == frame else { return bytes }
                var bad = bytes
                bad[bad.count - 1] ^= 0x01
                return bad
            }
            let round = radio.run(&initiator, &responder)
            XCTAssertNil(round.responder?.measurement, "frame \(frame)")
            if frame == 1 {
                XCTAssertEqual(round.initiator, .failed(.badAuthenticator))
            } else {
                XCTAssertEqual(round.responder, .failed(.badAuthenticator), "frame \(frame)")
            }
        }
    }

    /// A forged Final with the right key but moved timestamps (an attacker who had the key)
    /// still cannot make an impossible round count.
    func testFinalTimestampsThatCannotBeARoundAreImplausible() {
        var (initiator, responder) = RangingFixtures.pair()
        var radio = IdealRadio()
        let key = RangingFixtures.material.frameKey
        radio.alter = { index, bytes in
            guard index == 2, let frame = try? RangingFrame.open(bytes, frameKey: key), let t = frame.timestamps else { return bytes }
            let moved = InitiatorTimestamps(pollTx: t.pollTx.adding(units: 40_000_000_000), responseRx: t.responseRx, finalTx: t.finalTx)
            return RangingFrame.final(sessionID: frame.sessionID, round: frame.round, timestamps: moved).sealed(frameKey: key)
        }
        XCTAssertEqual(radio.run(&initiator, &responder).responder, .failed(.implausible))
    }

    func testInvalidSTSIsNeverARange() {
        for frame in 0..<3 {
            var (initiator, responder) = RangingFixtures.pair()
            var radio = IdealRadio()
            radio.stsValid = { $0 != frame }
            let round = radio.run(&initiator, &responder)
            XCTAssertNil(round.responder?.measurement)
            XCTAssertEqual(frame == 1 ? round.initiator : round.responder, .failed(.stsInvalid), "frame \(frame)")
        }
    }

    func testMismatchedSTSKeysFailTheSTSCheck() {
        let other = RangingMaterial(rangingKey: KAT.scalar("OCK1 test ranging key"), setup: try! RangingSetup(sessionID: 0x0bad_cafe, firstRound: 2))
        var initiator = DSTWRInitiator(material: other, txAntennaDelayUnits: 16385, random: SeededRandom("i"))
        var responder = DSTWRResponder(material: RangingFixtures.material, random: SeededRandom("r"))
        // Different material: the tag fails before the STS is even considered.
        XCTAssertEqual(IdealRadio().run(&initiator, &responder).responder, .failed(.badAuthenticator))
    }

    func testWrongSessionIDUnderTheSameKeyIsUnexpected() {
        var (initiator, responder) = RangingFixtures.pair()
        var radio = IdealRadio()
        let key = RangingFixtures.material.frameKey
        radio.alter = { index, bytes in
            index == 0 ? RangingFrame.poll(sessionID: 0x1234_5678, round: 1).sealed(frameKey: key) : bytes
        }
        XCTAssertEqual(radio.run(&initiator, &responder).responder, .failed(.unexpectedFrame))
    }

    func testReplayedOldRoundIsRejectedAndLaterRoundResynchronises() {
        var (initiator, responder) = RangingFixtures.pair()
        let radio = IdealRadio()
        var recorded: Bytes?
        var recorder = radio
        recorder.alter = { index, bytes in if index == 0 { recorded = bytes }; return bytes }
        XCTAssertNotNil(recorder.run(&initiator, &responder).responder?.measurement)
        let oldPoll = try! XCTUnwrap(recorded)

        // Round 2: the round-1 Poll is replayed to the car.
        var replay = radio
        replay.alter = { index, bytes in index == 0 ? oldPoll : bytes }
        XCTAssertEqual(replay.run(&initiator, &responder).responder, .failed(.unexpectedFrame))
        XCTAssertEqual(responder.nextRound, 3, "a replay never moves the round back")

        // The phone skips ahead (rounds 3 and 4 lost): the car follows the authentic Poll of round 5.
        _ = initiator.startRound(); _ = initiator.handle(.receiveTimeout)
        _ = initiator.startRound(); _ = initiator.handle(.receiveTimeout)
        XCTAssertEqual(radio.run(&initiator, &responder).responder, .failed(.unexpectedFrame), "round 3 loaded, Poll of 5 heard")
        XCTAssertEqual(responder.nextRound, 6)
        XCTAssertEqual(radio.run(&initiator, &responder).responder?.measurement?.round, 6, "in step again")
    }

    func testAntennaDelayMismatchIsReportedByTheInitiator() {
        var (initiator, responder) = RangingFixtures.pair(antenna: 16000)
        let round = IdealRadio().run(&initiator, &responder)   // the radio uses 16385
        XCTAssertEqual(round.initiator, .failed(.implausible))
    }

    func testRadioFailuresEndTheRound() {
        var (initiator, responder) = RangingFixtures.pair()
        _ = initiator.startRound()
        XCTAssertEqual(initiator.handle(.transmitTooLate), [.finished(.failed(.lateTransmit))])
        _ = responder.startRound()
        XCTAssertEqual(responder.handle(.receiveError("PHR")), [.finished(.failed(.receiveError))])
        _ = responder.startRound()
        XCTAssertEqual(responder.handle(.transmitted(timestamp: UWBTimestamp(1))), [.finished(.failed(.unexpectedFrame))])
        XCTAssertEqual(responder.handle(.receiveTimeout), [], "an idle role ignores the radio")
    }

    func testNoRandomnessNoRound() {
        var initiator = DSTWRInitiator(material: RangingFixtures.material, txAntennaDelayUnits: 0, random: FailingRandom())
        XCTAssertEqual(initiator.startRound(), [.finished(.failed(.lateTransmit))])
        var responder = DSTWRResponder(material: RangingFixtures.material, random: FailingRandom())
        XCTAssertEqual(responder.startRound(), [.finished(.failed(.lateTransmit))])
        XCTAssertEqual(initiator.nextRound, 2, "the round number is spent anyway")
    }

    func testInitiatorPredictsItsFinalTimestamp() {
        let programmed = UWBTimestamp(0x12_3456_79ff)
        let actual = RangingTiming.actualTransmitTime(programmed: programmed, antennaDelayUnits: 16385)
        XCTAssertEqual(actual.rawValue, 0x12_3456_7800 + 16385)
        XCTAssertEqual(RangingTiming.actualTransmitTime(programmed: UWBTimestamp(UWBTimestamp.mask), antennaDelayUnits: 1024).rawValue,
                       512, "wraps: (2^40 - 512) + 1024 mod 2^40")
    }

    func testReceiveWindows() {
        var (initiator, responder) = RangingFixtures.pair()
        let window = UInt32(RangingFixtures.setup.replyDelayMicros) + UInt32(RangingFixtures.setup.replyJitterMicros) + 1000
        guard case .transmit(_, nil, window?)? = initiator.startRound().last else { return XCTFail() }
        XCTAssertEqual(responder.startRound().last, .receive(timeoutMicros: 100_000), "a whole round interval")
    }
}
