// Pure, clock-driven debouncing: feed raw samples with their times, get confirmed changes.
// No threads or timers, so it is tested by feeding sample sequences.

/// A change that held for the whole debounce window.
public struct DebouncedChange: Sendable, Equatable {
    public let active: Bool
    /// When the raw level first took this value (the start of the run that survived the window).
    public let sinceMillis: UInt64
    /// The sample time at which the change was confirmed.
    public let atMillis: UInt64
}

public struct Debouncer: Sendable {
    public let windowMillis: UInt64
    public private(set) var stable: Bool
    /// The raw level that differs from `stable`, and since when; nil while raw agrees with stable.
    private var pending: (active: Bool, since: UInt64)?

    public init(windowMillis: UInt64, initial: Bool) {
        self.windowMillis = windowMillis
        self.stable = initial
    }

    /// When a pending change will have held for the whole window (sample then to confirm it);
    /// nil while raw agrees with the stable level.
    public var settlesAtMillis: UInt64? { pending.map { $0.since + windowMillis } }

    /// The raw level changed since the last sample even if it reads the same now (an edge
    /// seen between samples, e.g. a bounce that came back): the run starts again.
    public mutating func restart() { pending = nil }

    /// A raw level that returns to the stable one before the window ends (a contact bounce) is
    /// dropped; one that stays for at least the window is reported once.
    public mutating func feed(_ raw: Bool, atMillis now: UInt64) -> DebouncedChange? {
        guard raw != stable else {
            pending = nil
            return nil
        }
        let since: UInt64
        if let pending, pending.active == raw {
            since = pending.since
        } else {
            since = now
            pending = (raw, now)
        }
        // Saturating: a sample time earlier than the run start (misuse) just waits.
        guard now >= since, now - since >= windowMillis else { return nil }
        stable = raw
        pending = nil
        return DebouncedChange(active: raw, sinceMillis: since, atMillis: now)
    }
}
