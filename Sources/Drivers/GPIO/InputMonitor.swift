// Debounced board inputs reported as state changes, plus the pairing-button long press.
// Pure and clock-driven: the agent samples BoardLines after an edge and at the deadlines this
// asks for (`nextSampleMillis`), and feeds the values in.

public enum InputEvent: Sendable, Equatable {
    /// A debounced input changed; `atMillis` is when the change was confirmed.
    case changed(InputRole, active: Bool, atMillis: UInt64)
    /// The pairing button has been held for the hold time: open the pairing window.
    case pairingRequested(atMillis: UInt64)
}

public struct InputMonitor: Sendable {
    public let debounceMillis: UInt64
    public let pairingHoldMillis: UInt64
    private var debouncers: [InputRole: Debouncer] = [:]
    /// Start of the current pairing-button press, and whether it was already reported.
    private var pressStart: UInt64?
    private var pairingReported = false

    public init(debounceMillis: UInt64 = 30, pairingHoldMillis: UInt64 = 5000) {
        self.debounceMillis = debounceMillis
        self.pairingHoldMillis = pairingHoldMillis
    }

    public init(board: BoardDescription) {
        self.init(debounceMillis: board.debounceMillis, pairingHoldMillis: board.pairingHoldMillis)
    }

    /// Debounced logical levels; a role is absent until its first sample.
    public var states: [InputRole: Bool] { debouncers.mapValues(\.stable) }

    /// When the next sample is needed even without an edge: a pending change settles, or the
    /// pairing button has been held for the hold time. nil: nothing to wait for but edges.
    public var nextSampleMillis: UInt64? {
        var due = debouncers.values.compactMap(\.settlesAtMillis).min()
        if let start = pressStart, !pairingReported {
            due = min(due ?? .max, start + pairingHoldMillis)
        }
        return due
    }

    /// Feeds one round of raw samples. The first sample of a role sets its state without an
    /// event (there is no earlier state to change from). `edged`: roles that reported an edge
    /// since the last round; their debounce run restarts now.
    public mutating func update(_ samples: [InputRole: Bool], atMillis now: UInt64, edged: Set<InputRole> = []) -> [InputEvent] {
        var events: [InputEvent] = []
        // Sorted so events come out in a stable order.
        for (role, raw) in samples.sorted(by: { $0.key < $1.key }) {
            guard var debouncer = debouncers[role] else {
                // A button already held at start-up is ignored until released: a shorted or
                // jammed button must not open the pairing window on every boot.
                debouncers[role] = Debouncer(windowMillis: debounceMillis, initial: raw)
                continue
            }
            if edged.contains(role) { debouncer.restart() }
            if let change = debouncer.feed(raw, atMillis: now) {
                events.append(.changed(role, active: change.active, atMillis: change.atMillis))
                if role == .pairingButton {
                    pressStart = change.active ? change.sinceMillis : nil
                    pairingReported = false
                }
            }
            debouncers[role] = debouncer
        }
        // Held long enough: report once per press, measured from the first raw contact.
        if let start = pressStart, !pairingReported, now >= start, now - start >= pairingHoldMillis {
            pairingReported = true
            events.append(.pairingRequested(atMillis: now))
        }
        return events
    }

    /// Reads the board's inputs and feeds them in: the agent's sampling step.
    public mutating func sample(_ lines: BoardLines, clock: any MonotonicClock, edged: Set<InputRole> = []) throws(GPIOError) -> [InputEvent] {
        let samples = try lines.readInputs()
        return update(samples, atMillis: clock.nowMillis(), edged: edged)
    }
}
