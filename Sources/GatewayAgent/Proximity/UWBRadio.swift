// The car's UWB radio as the agent sees it: one DS-TWR round at a time for a phone that set up
// ranging in its session (the car is the responder: it receives Final and computes the range).
// Two backends: a DW3000 on spidev (DW3000Radio) and, with --simulate-uwb, a simulated world of
// register-level chips in which the phone's side is simulated too (SimulatedUWBRadio).
import Drivers
import Protocol

protocol UWBRadio: AnyObject {
    /// "DW3110 on /dev/spidev0.0, channel 9" or why it is not available.
    var summary: String { get }
    /// False while the chip does not answer (the agent then refuses unlock: it fails closed).
    var isAvailable: Bool { get }
    /// Chip, configuration and counters for the console's `uwb`.
    var snapshot: DW3000Snapshot? { get }
    /// A phone's ranging session begins (replacing any earlier one on the link).
    func open(_ grant: RangingGrant)
    /// The link's ranging session is over.
    func close(_ link: LinkID)
    /// Starts one round for `link`. `.finished` when it ended at once (the simulator runs a
    /// round in virtual time), `.pending` when the chip is at work (then `pollDescriptor`,
    /// `pendingDeadline` and `service` carry it on), `.noSession` when the link has none.
    func startRound(for link: LinkID, nowMillis: UInt64) -> UWBRoundStart
    /// The IRQ line's descriptor while a round is pending (nil: none pending, or no IRQ line).
    var pollDescriptor: FileDescriptor? { get }
    /// When to service a pending round even without an interrupt (polling without an IRQ
    /// line, and the round's timeout).
    var pendingDeadline: UInt64? { get }
    /// Services the pending round (interrupt or deadline); its outcome once it ended.
    func service(nowMillis: UInt64) -> (link: LinkID, outcome: RangingOutcome)?
    /// Called once a second: retry a chip that did not come up.
    func housekeeping(nowMillis: UInt64)
}

enum UWBRoundStart: Equatable {
    case finished(RangingOutcome)
    case pending
    case noSession
}
