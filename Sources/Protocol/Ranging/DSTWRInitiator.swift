// The phone's side of a DS-TWR round (docs/protocol.md section 19): Poll at once, Response in,
// Final out at a randomised delay carrying the phone's three timestamps. It computes no range;
// the car, which receives the Final, does.

public struct DSTWRInitiator: RangingRole, Sendable {
    enum State: Sendable, Equatable {
        case idle
        case pollQueued(round: UInt32, jitter: UInt64)
        case awaitingResponse(round: UInt32, pollTx: UWBTimestamp, jitter: UInt64)
        case finalQueued(expectedFinalTx: UWBTimestamp)
    }

    public let material: RangingMaterial
    /// This radio's TX antenna delay in DTU (the value programmed into the chip). The Final
    /// carries final_tx before it is sent, so the role must predict what the chip will stamp.
    public let txAntennaDelayUnits: UInt16
    let random: any RandomSource
    /// The round the next `startRound` uses. Spent even if the round fails, so an STS counter
    /// is never used twice.
    public private(set) var nextRound: UInt32
    private(set) var state: State = .idle

    public init(material: RangingMaterial, txAntennaDelayUnits: UInt16, random: any RandomSource = SystemRandom()) {
        self.material = material
        self.txAntennaDelayUnits = txAntennaDelayUnits
        self.random = random
        nextRound = material.setup.firstRound
    }

    public mutating func startRound() -> [RangingAction] {
        guard nextRound < RangingMaterial.maxRound else { return finish(.failed(.unexpectedFrame)) }
        let round = nextRound
        nextRound += 1
        // Drawn before anything is sent: without randomness the round does not start at all
        // (a predictable reply time is what the jitter exists to prevent).
        guard let jitter = try? RangingTiming.jitterUnits(boundMicros: material.setup.replyJitterMicros, random: random) else {
            return finish(.failed(.lateTransmit))
        }
        state = .pollQueued(round: round, jitter: jitter)
        let poll = RangingFrame.poll(sessionID: material.setup.sessionID, round: round).sealed(frameKey: material.frameKey)
        return [.loadSTS(key: material.stsKey, iv: material.stsIV(round: round)),
                .transmit(payload: poll, at: nil, thenReceiveTimeoutMicros: RangingTiming.replyWindowMicros(material.setup))]
    }

    public mutating func handle(_ event: RangingEvent) -> [RangingAction] {
        switch (state, event) {
        case (.idle, _):
            return []
        case (.pollQueued(let round, let jitter), .transmitted(let pollTx)):
            state = .awaitingResponse(round: round, pollTx: pollTx, jitter: jitter)
            return []
        case (.awaitingResponse(let round, let pollTx, let jitter), .received(let payload, let responseRx, _, let stsValid)):
            return answer(payload, round: round, pollTx: pollTx, responseRx: responseRx, stsValid: stsValid, jitter: jitter)
        case (.finalQueued(let expected), .transmitted(let finalTx)):
            // A different stamp means the Final carried a wrong final_tx (antenna delay or
            // granularity disagree with the driver): the car's range would be off.
            return finish(finalTx == expected ? .completed : .failed(.implausible))
        default:
            return finish(.failed(event.failureWhenNotAwaited))
        }
    }

    private mutating func answer(_ payload: Bytes, round: UInt32, pollTx: UWBTimestamp, responseRx: UWBTimestamp,
                                 stsValid: Bool, jitter: UInt64) -> [RangingAction] {
        let frame: RangingFrame
        do throws(RangingFrameError) {
            frame = try RangingFrame.open(payload, frameKey: material.frameKey)
        } catch {
            return finish(.failed(error.failure))
        }
        guard frame.type == .response, frame.sessionID == material.setup.sessionID, frame.round == round else {
            return finish(.failed(.unexpectedFrame))
        }
        // The arrival time is only trustworthy if the STS checked out.
        guard stsValid else { return finish(.failed(.stsInvalid)) }
        let programmed = responseRx.adding(units: RangingTiming.replyUnits(material.setup) + jitter)
        let finalTx = RangingTiming.actualTransmitTime(programmed: programmed, antennaDelayUnits: txAntennaDelayUnits)
        let stamps = InitiatorTimestamps(pollTx: pollTx, responseRx: responseRx, finalTx: finalTx)
        let final = RangingFrame.final(sessionID: material.setup.sessionID, round: round, timestamps: stamps)
        state = .finalQueued(expectedFinalTx: finalTx)
        return [.transmit(payload: final.sealed(frameKey: material.frameKey), at: programmed, thenReceiveTimeoutMicros: nil)]
    }

    private mutating func finish(_ outcome: RangingOutcome) -> [RangingAction] {
        state = .idle
        return [.finished(outcome)]
    }
}
