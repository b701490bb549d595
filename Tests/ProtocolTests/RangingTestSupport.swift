// A tiny ideal UWB radio for the ranging tests: two chips with their own clock offset and
// drift, a chosen distance, exact arrival times, and hooks to lose or alter frames in flight.
@testable import Protocol

struct IdealRadio {
    var metres = 1.5
    var ppmInitiator = 20.0
    var ppmResponder = -20.0
    /// The responder's counter wraps during the round; the initiator's does not.
    var offsetInitiator: UInt64 = 0x12_3456_7890
    var offsetResponder: UInt64 = 0xff_fff8_0000
    var antennaInitiator: UInt16 = 16385
    var antennaResponder: UInt16 = 16450
    var quality = 0.9
    /// Per frame (0 Poll, 1 Response, 2 Final): the payload that arrives, or nil if lost.
    var alter: (Int, Bytes) -> Bytes? = { $1 }
    /// Per frame: whether the receiver's STS check passes (given matching key and IV).
    var stsValid: (Int) -> Bool = { _ in true }

    struct Round {
        var initiator: RangingOutcome?
        var responder: RangingOutcome?
        /// The responder's Response programmed time minus Poll arrival, in DTU.
        var responderReplyUnits: UInt64?
        var initiatorReplyUnits: UInt64?
    }

    var timeOfFlightSeconds: Double { metres / 299_792_458 }

    func initiatorClock(_ t: Double) -> UWBTimestamp { clock(t, offsetInitiator, ppmInitiator) }
    func responderClock(_ t: Double) -> UWBTimestamp { clock(t, offsetResponder, ppmResponder) }

    private func clock(_ t: Double, _ offset: UInt64, _ ppm: Double) -> UWBTimestamp {
        UWBTimestamp(offset &+ UInt64((t * (1 + ppm * 1e-6) * UWBTimestamp.unitsPerSecond).rounded()))
    }

    private func trueTime(_ stamp: UWBTimestamp, _ offset: UInt64, _ ppm: Double) -> Double {
        Double(stamp.units(since: UWBTimestamp(offset))) / ((1 + ppm * 1e-6) * UWBTimestamp.unitsPerSecond)
    }

    private static func sts(_ actions: [RangingAction]) -> RangingAction? {
        actions.first { if case .loadSTS = $0 { return true } else { return false } }
    }

    private static func outcome(_ actions: [RangingAction]) -> RangingOutcome? {
        for action in actions { if case .finished(let outcome) = action { return outcome } }
        return nil
    }

    /// One round, starting at true time `start` seconds.
    func run(_ initiator: inout DSTWRInitiator, _ responder: inout DSTWRResponder, start: Double = 0.001) -> Round {
        var round = Round()
        let a0 = initiator.startRound(), b0 = responder.startRound()
        let sameSTS = Self.sts(a0) != nil && Self.sts(a0) == Self.sts(b0)
        round.initiator = Self.outcome(a0)
        round.responder = Self.outcome(b0)
        guard round.initiator == nil, round.responder == nil,
              case .transmit(let poll, nil, _)? = a0.last else { return round }
        let tof = timeOfFlightSeconds

        // Poll
        _ = initiator.handle(.transmitted(timestamp: initiatorClock(start)))
        guard let pollIn = alter(0, poll) else {
            round.responder = Self.outcome(responder.handle(.receiveTimeout))
            round.initiator = Self.outcome(initiator.handle(.receiveTimeout))
            return round
        }
        let pollRx = responderClock(start + tof)
        let b1 = responder.handle(.received(payload: pollIn, timestamp: pollRx, stsQuality: quality,
                                            stsValid: sameSTS && stsValid(0)))
        if let done = Self.outcome(b1) {
            round.responder = done
            round.initiator = Self.outcome(initiator.handle(.receiveTimeout))
            return round
        }
        guard case .transmit(let response, let at?, _)? = b1.first else { return round }
        round.responderReplyUnits = at.units(since: pollRx)

        // Response
        let responseTx = RangingTiming.actualTransmitTime(programmed: at, antennaDelayUnits: antennaResponder)
        let t1 = trueTime(responseTx, offsetResponder, ppmResponder)
        _ = responder.handle(.transmitted(timestamp: responseTx))
        guard let responseIn = alter(1, response) else {
            round.initiator = Self.outcome(initiator.handle(.receiveTimeout))
            round.responder = Self.outcome(responder.handle(.receiveTimeout))
            return round
        }
        let responseRx = initiatorClock(t1 + tof)
        let a1 = initiator.handle(.received(payload: responseIn, timestamp: responseRx, stsQuality: quality,
                                            stsValid: sameSTS && stsValid(1)))
        if let done = Self.outcome(a1) {
            round.initiator = done
            round.responder = Self.outcome(responder.handle(.receiveTimeout))
            return round
        }
        guard case .transmit(let final, let finalAt?, nil)? = a1.first else { return round }
        round.initiatorReplyUnits = finalAt.units(since: responseRx)

        // Final
        let finalTx = RangingTiming.actualTransmitTime(programmed: finalAt, antennaDelayUnits: antennaInitiator)
        let t2 = trueTime(finalTx, offsetInitiator, ppmInitiator)
        round.initiator = Self.outcome(initiator.handle(.transmitted(timestamp: finalTx)))
        guard let finalIn = alter(2, final) else {
            round.responder = Self.outcome(responder.handle(.receiveTimeout))
            return round
        }
        round.responder = Self.outcome(responder.handle(.received(payload: finalIn, timestamp: responderClock(t2 + tof),
                                                                  stsQuality: quality - 0.1, stsValid: sameSTS && stsValid(2))))
        return round
    }
}

enum RangingFixtures {
    static let setup = try! RangingSetup(sessionID: 0x0bad_cafe)
    static let material = RangingMaterial(rangingKey: KAT.scalar("OCK1 test ranging key"), setup: setup)

    static func pair(material: RangingMaterial = material, antenna: UInt16 = 16385) -> (DSTWRInitiator, DSTWRResponder) {
        (DSTWRInitiator(material: material, txAntennaDelayUnits: antenna, random: SeededRandom("initiator jitter")),
         DSTWRResponder(material: material, random: SeededRandom("responder jitter")))
    }
}

extension RangingOutcome {
    var measurement: RangeMeasurement? {
        if case .range(let measurement) = self { return measurement }
        return nil
    }
}
