// Something the agent loop serves besides the link server: the console, the actuation
// worker's completions, the input sampler. One poll(2) covers them all, so the loop stays on
// one thread and every handler runs there (no locks around the engine or the store's callers).
import Drivers

protocol LoopSource: AnyObject {
    /// Descriptors to wait on in this round (may change from round to round; empty is fine).
    func pollSet() -> [(FileDescriptor, PollEvents)]
    /// When the source wants to run even if none of its descriptors is ready (monotonic
    /// milliseconds); nil: only when ready.
    func nextDeadline() -> UInt64?
    /// Runs after every wait with the events for this round's `pollSet()`, in the same order
    /// (all empty after a timeout). Must not block: bounded work, then return.
    func process(_ ready: [PollEvents], nowMillis: UInt64)
}
