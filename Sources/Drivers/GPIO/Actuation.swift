// What a lock, unlock or trunk pulse did, in a form the agent can log and record as an event.

public enum Actuation: String, CaseIterable, Sendable {
    case lock, unlock, trunkRelease

    public var outputRole: OutputRole {
        switch self {
        case .lock: return .lock
        case .unlock: return .unlock
        case .trunkRelease: return .trunkRelease
        }
    }
}

/// The lock-state read-back after a lock or unlock pulse.
public enum LockFeedback: Sendable, Equatable {
    /// The board has no lock-state input, or the actuation (trunk) has no lock state.
    case notChecked
    /// The input shows the expected state.
    case confirmed(locked: Bool)
    /// The input disagrees: the actuator jammed, a wire broke, or the door was blocked.
    case mismatch(expectedLocked: Bool, observedLocked: Bool)
    /// The input could not be read.
    case unreadable(GPIOError)
}

public struct ActuationResult: Sendable, Equatable {
    public let actuation: Actuation
    /// Which line moved.
    public let line: GPIOLineReference
    /// Clock time the line went active and back inactive.
    public let activatedAtMillis: UInt64
    public let deactivatedAtMillis: UInt64
    public let feedback: LockFeedback

    public var activeMillis: UInt64 { deactivatedAtMillis &- activatedAtMillis }

    /// The pulse happened, but the car did not confirm it: record a fault event.
    public var isFault: Bool {
        switch feedback {
        case .notChecked, .confirmed: return false
        case .mismatch, .unreadable: return true
        }
    }
}

public enum ActuationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Another actuation is in progress (the interlock refuses, it does not queue).
    case busy(inProgress: Actuation)
    /// A line failed to return to inactive earlier; nothing moves until the agent restarts.
    case latched(reason: String)
    /// The pulse width is outside 10...1000 ms (a longer pulse can burn an actuator motor).
    case invalidPulseWidth(UInt64)
    /// The feedback settle time is outside 0...2000 ms.
    case invalidSettleTime(UInt64)
    /// The line could not be driven; it was driven back inactive.
    case gpio(GPIOError)
    /// The line could not be driven back inactive: it may still be energised.
    case stuckActive(GPIOError)

    public var description: String {
        switch self {
        case .busy(let other): return "busy: \(other.rawValue) in progress"
        case .latched(let reason): return "actuators disabled after an earlier failure: \(reason)"
        case .invalidPulseWidth(let width): return "pulse width \(width) ms outside 10...1000 ms"
        case .invalidSettleTime(let settle): return "feedback settle time \(settle) ms outside 0...2000 ms"
        case .gpio(let error): return "actuation failed: \(error)"
        case .stuckActive(let error): return "line may still be active: \(error)"
        }
    }
}
