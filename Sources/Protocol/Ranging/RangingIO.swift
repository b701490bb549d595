// The seam between the sans-IO ranging roles (Protocol/Ranging) and a UWB radio
// (Drivers/UWB): the radio reports what happened (events), the role says what to do next
// (actions). Both sides see only chip time (UWBTimestamp), never a wall clock.

/// What the radio reports to a ranging role.
public enum RangingEvent: Sendable, Equatable {
    /// A frame the role asked for left the antenna at `timestamp` (TX_TIME, antenna delay applied).
    case transmitted(timestamp: UWBTimestamp)
    /// A frame arrived: its payload (without the 2-byte FCS), the arrival time (RX_TIME, antenna
    /// delay applied) and the STS verdict. `stsQuality` is ACC_QUAL as a fraction of the STS
    /// length; `stsValid` is the driver's combined check (good CRC, quality at or above the
    /// threshold, TOAST clear).
    case received(payload: [UInt8], timestamp: UWBTimestamp, stsQuality: Double, stsValid: Bool)
    /// The receive window closed without a frame.
    case receiveTimeout
    /// A frame was heard but unusable (preamble/SFD/PHR/CRC error); the kind is for counters.
    case receiveError(String)
    /// A delayed transmission was programmed too late (HPDWARN): nothing was sent.
    case transmitTooLate
}

/// What a ranging role asks the radio to do.
public enum RangingAction: Sendable, Equatable {
    /// Send `payload` (FCS added by the chip) at chip time `at` (delayed TX; the chip ignores the
    /// low 9 bits, so the real time is `at` rounded down to 512 DTU), or at once when nil. When
    /// `thenReceiveTimeoutMicros` is set, the receiver opens right after the transmission for
    /// that long.
    case transmit(payload: [UInt8], at: UWBTimestamp?, thenReceiveTimeoutMicros: UInt32?)
    /// Open the receiver now for at most this long.
    case receive(timeoutMicros: UInt32)
    /// Load the STS key and IV (16 bytes each) before the next frame.
    case loadSTS(key: [UInt8], iv: [UInt8])
    /// The round is over; nothing more to do until the next `start`.
    case finished(RangingOutcome)
}

/// How one ranging round ended.
public enum RangingOutcome: Sendable, Equatable {
    /// A measured range (only the responder side, which receives Final, computes one).
    case range(RangeMeasurement)
    /// The initiator's part went through; the responder has the range.
    case completed
    /// The round produced no valid range; the reason is for counters and audit.
    case failed(RangingFailure)
}

public enum RangingFailure: String, Sendable, Equatable {
    case timeout, receiveError, stsInvalid, badAuthenticator, unexpectedFrame, lateTransmit, implausible
}

/// One DS-TWR result.
public struct RangeMeasurement: Sendable, Equatable {
    /// Round number within the ranging session (the STS IV counter of its Poll).
    public let round: UInt32
    /// Time of flight in DTU (may be slightly negative at very short range from noise).
    public let timeOfFlightUnits: Double
    /// The distance it means, in metres.
    public var distanceMetres: Double { timeOfFlightUnits * UWBTimestamp.metresPerUnit }
    /// The lowest STS quality among the frames of the round (fraction of the STS length).
    public let stsQuality: Double

    public init(round: UInt32, timeOfFlightUnits: Double, stsQuality: Double) {
        self.round = round
        self.timeOfFlightUnits = timeOfFlightUnits
        self.stsQuality = stsQuality
    }
}

/// One side of a ranging exchange as a state machine: the radio's events in, actions out.
/// The runner (Drivers/UWB) executes the actions on a chip and feeds back what the chip
/// reports, until `.finished`.
public protocol RangingRole {
    /// Begins the next round: typically `.loadSTS` then the first transmit or receive.
    mutating func startRound() -> [RangingAction]
    /// The radio's report; the next actions (empty while waiting).
    mutating func handle(_ event: RangingEvent) -> [RangingAction]
}

extension RangingEvent {
    /// How a round ends when this event is not the one a role waits for: a timeout, a
    /// receive error or a late transmission is a loss on the air; a frame or transmission
    /// out of turn is unexpected. Both roles use the same mapping.
    var failureWhenNotAwaited: RangingFailure {
        switch self {
        case .receiveTimeout: return .timeout
        case .receiveError: return .receiveError
        case .transmitTooLate: return .lateTransmit
        case .transmitted, .received: return .unexpectedFrame
        }
    }
}
