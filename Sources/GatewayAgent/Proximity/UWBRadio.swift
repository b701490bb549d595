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
    /// Runs one round for `link` to its end (bounded by the round interval); nil when the link
    /// has no session.
    func round(for link: LinkID, nowMillis: UInt64) -> RangingOutcome?
    /// Called once a second: retry a chip that did not come up.
    func housekeeping(nowMillis: UInt64)
}
