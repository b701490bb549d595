// Admitted cloud messages waiting for the agent's thread: bounded, shed by priority. A flood of
// messages (10,000 forged revocations with fresh IDs) must not grow memory without limit nor
// push a real remote command or revocation out behind configuration documents. When full, the
// oldest message of the lowest class present goes (the new one, when it is that lowest class
// and none of its class waits); every shed message is counted (console `status`).
import Drivers
import Synchronization

final class InboundMailbox: Sendable {
    static let capacity = 256

    /// Higher is kept longer. Remote commands and revocations decide who can open the car now;
    /// configuration and the `unsupported` types can wait for the cloud's retry.
    enum Priority: Int, Comparable {
        case routine = 0
        case security = 1

        static func < (a: Priority, b: Priority) -> Bool { a.rawValue < b.rawValue }

        init(_ message: InboundEnvelope) {
            switch message.type {
            case "revocation", "revocationList", "fleetKey": self = .security
            case "command" where message.topic.hasSuffix("/cmd"): self = .security
            default: self = .routine
            }
        }
    }

    private struct State {
        var queues: [[InboundEnvelope]] = [[], []]
        var count = 0
        var shed = 0
    }

    private let state = Mutex(State())
    private let capacity: Int
    /// Raised on every post, so the agent loop handles a message at once, not at its next tick.
    let arrived: EventCounter

    init(capacity: Int = InboundMailbox.capacity) throws(Errno) {
        self.capacity = max(1, capacity)
        arrived = try EventCounter()
    }

    var count: Int { state.withLock { $0.count } }
    var shedCount: Int { state.withLock { $0.shed } }

    /// Queues `message`; returns the message shed to make room (possibly `message` itself).
    @discardableResult
    func post(_ message: InboundEnvelope) -> InboundEnvelope? {
        let priority = Priority(message)
        let shed: InboundEnvelope? = state.withLock { state in
            var dropped: InboundEnvelope?
            if state.count >= capacity {
                // The lowest class that has a message waiting, or the new one's if lower still.
                let lowestWaiting = state.queues.firstIndex { !$0.isEmpty } ?? priority.rawValue
                if priority.rawValue < lowestWaiting || (priority.rawValue == lowestWaiting && state.queues[lowestWaiting].isEmpty) {
                    state.shed += 1
                    return message
                }
                dropped = state.queues[lowestWaiting].removeFirst()
                state.count -= 1
                state.shed += 1
            }
            state.queues[priority.rawValue].append(message)
            state.count += 1
            return dropped
        }
        if shed != message { arrived.signal() }
        return shed
    }

    /// Up to `limit` messages, most important class first, oldest first within a class.
    func take(limit: Int) -> [InboundEnvelope] {
        state.withLock { state in
            var taken: [InboundEnvelope] = []
            for index in state.queues.indices.reversed() where taken.count < limit {
                let n = min(limit - taken.count, state.queues[index].count)
                taken += state.queues[index].prefix(n)
                state.queues[index].removeFirst(n)
            }
            state.count -= taken.count
            return taken
        }
    }
}
