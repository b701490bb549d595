// The car's side of a DS-TWR round (docs/protocol.md section 19): Poll in, Response out at a
// randomised delay, Final in; then the range. Every frame must carry a valid STS and an
// authentic tag for this session and round, or the round yields no range.

public struct DSTWRResponder: RangingRole, Sendable {
    enum State: Sendable, Equatable {
        case idle
        case awaitingPoll(round: UInt32, jitter: UInt64)
        case responseQueued(round: UInt32, pollRx: UWBTimestamp, quality: Double)
        case awaitingFinal(round: UInt32, pollRx: UWBTimestamp, responseTx: UWBTimestamp, quality: Double)
    }

    public let material: RangingMaterial
    /// How long the car listens for a Poll per round. The phone decides when a round starts,
    /// so by default the car listens a whole round interval.
    public let pollWindowMicros: UInt32
    let random: any RandomSource
    /// The round the next `startRound` expects. Only ever increases: a Poll for an older round
    /// is a replay and is refused.
    public private(set) var nextRound: UInt32
    private(set) var state: State = .idle

    public init(material: RangingMaterial, random: any RandomSource = SystemRandom(), pollWindowMicros: UInt32? = nil) {
        self.material = material
        self.random = random
        self.pollWindowMicros = pollWindowMicros ?? UInt32(material.setup.roundIntervalMillis) * 1000
        nextRound = material.setup.firstRound
    }

    public mutating func startRound() -> [RangingAction] {
        guard nextRound < RangingMaterial.maxRound else { return finish(.failed(.unexpectedFrame)) }
        let round = nextRound
        nextRound += 1
        guard let jitter = try? RangingTiming.jitterUnits(boundMicros: material.setup.replyJitterMicros, random: random) else {
            return finish(.failed(.lateTransmit))
        }
        state = .awaitingPoll(round: round, jitter: jitter)
        return [.loadSTS(key: material.stsKey, iv: material.stsIV(round: round)), .receive(timeoutMicros: pollWindowMicros)]
    }

    public mutating func handle(_ event: RangingEvent) -> [RangingAction] {
        switch (state, event) {
        case (.idle, _):
            return []
        case (.awaitingPoll(let round, let jitter), .received(let payload, let pollRx, let quality, let stsValid)):
            return reply(payload, round: round, pollRx: pollRx, quality: quality, stsValid: stsValid, jitter: jitter)
        case (.responseQueued(let round, let pollRx, let quality), .transmitted(let responseTx)):
            state = .awaitingFinal(round: round, pollRx: pollRx, responseTx: responseTx, quality: quality)
            return []
        case (.awaitingFinal(let round, let pollRx, let responseTx, let pollQuality),
              .received(let payload, let finalRx, let quality, let stsValid)):
            let frame: RangingFrame
            do throws(RangingFrameError) {
                frame = try open(payload, type: .final, round: round)
            } catch {
                return finish(.failed(error.failure))
            }
            guard stsValid else { return finish(.failed(.stsInvalid)) }
            guard let stamps = frame.timestamps else { return finish(.failed(.unexpectedFrame)) }
            let round = TwoWayRanging.DoubleSided(pollTx: stamps.pollTx, pollRx: pollRx, responseTx: responseTx,
                                                  responseRx: stamps.responseRx, finalTx: stamps.finalTx, finalRx: finalRx)
            return finish(measure(round, number: frame.round, quality: min(pollQuality, quality)))
        default:
            return finish(.failed(event.failureWhenNotAwaited))
        }
    }

    private mutating func reply(_ payload: Bytes, round: UInt32, pollRx: UWBTimestamp, quality: Double,
                                stsValid: Bool, jitter: UInt64) -> [RangingAction] {
        let frame: RangingFrame
        do throws(RangingFrameError) {
            frame = try RangingFrame.open(payload, frameKey: material.frameKey)
            guard frame.type == .poll, frame.sessionID == material.setup.sessionID else {
                throw .unexpected("\(frame.type) for session \(frame.sessionID)")
            }
        } catch {
            return finish(.failed(error.failure))
        }
        if frame.round > round, frame.round < RangingMaterial.maxRound {
            // An authentic Poll from a later round: the phone skipped rounds (we missed its
            // Polls). Follow it, but this round was loaded with the wrong IV: no range.
            nextRound = frame.round + 1
            return finish(.failed(.unexpectedFrame))
        }
        // An older round is a replay of a frame already heard (or its STS already used).
        guard frame.round == round else { return finish(.failed(.unexpectedFrame)) }
        guard stsValid else { return finish(.failed(.stsInvalid)) }
        let at = pollRx.adding(units: RangingTiming.replyUnits(material.setup) + jitter)
        let response = RangingFrame.response(sessionID: material.setup.sessionID, round: round).sealed(frameKey: material.frameKey)
        state = .responseQueued(round: round, pollRx: pollRx, quality: quality)
        return [.transmit(payload: response, at: at, thenReceiveTimeoutMicros: RangingTiming.replyWindowMicros(material.setup))]
    }

    private func open(_ payload: Bytes, type: RangingFrameType, round: UInt32) throws(RangingFrameError) -> RangingFrame {
        let frame = try RangingFrame.open(payload, frameKey: material.frameKey)
        guard frame.type == type, frame.sessionID == material.setup.sessionID, frame.round == round else {
            throw .unexpected("\(frame.type) round \(frame.round)")
        }
        return frame
    }

    /// The range, or `implausible` when the intervals cannot belong to one round (each is at
    /// most two reply windows; a wrapped or forged stamp is not) or the distance lies outside
    /// the bounds of RangingTiming. Round trips are not required to exceed the replies: at
    /// very short range noise can make the ToF slightly negative.
    private func measure(_ t: TwoWayRanging.DoubleSided, number: UInt32, quality: Double) -> RangingOutcome {
        let limit = RangingTiming.maxIntervalUnits(material.setup)
        guard [t.ra, t.rb, t.da, t.db].allSatisfy({ $0 <= limit }) else {
            return .failed(.implausible)
        }
        let measurement = RangeMeasurement(round: number, timeOfFlightUnits: t.timeOfFlightUnits, stsQuality: quality)
        guard (RangingTiming.minimumMetres...RangingTiming.maximumMetres).contains(measurement.distanceMetres) else {
            return .failed(.implausible)
        }
        return .range(measurement)
    }

    private mutating func finish(_ outcome: RangingOutcome) -> [RangingAction] {
        state = .idle
        return [.finished(outcome)]
    }
}
