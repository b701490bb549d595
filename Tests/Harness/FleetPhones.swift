// Owners visiting a sample of the fleet's cars: one thread per car, one complete phone session
// (Hello .. Response to `status`) every `intervalSeconds` with a little jitter, so the cars'
// sessions do not line up. Every session that ends with ok is an access decision the car logs
// and sends to the back end; the monotonic moment the phone got the answer is kept, in order,
// so the test can time each event from decision to back end.
#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import Drivers
import Protocol

public final class FleetPhones: Sendable {
    public struct Visitor: Sendable {
        public let vehicleID: String
        public let phone: PhoneConfiguration
        public let socketPath: String

        public init(vehicleID: String, phone: PhoneConfiguration, socketPath: String) {
            self.vehicleID = vehicleID
            self.phone = phone
            self.socketPath = socketPath
        }
    }

    public struct Tally: Sendable {
        /// Per vehicle, the monotonic seconds of each ok decision, in order.
        public var decisions: [String: [Double]] = [:]
        public var outcomes: [String: Int] = [:]
        public var total: Int { outcomes.values.reduce(0, +) }
    }

    public let visitors: [Visitor]
    public let intervalSeconds: Double
    private let stopping = Atomic<Bool>(false)
    private let state = Mutex(Tally())
    private let threads = Mutex<[SystemThread]>([])

    public init(visitors: [Visitor], intervalSeconds: Double) {
        self.visitors = visitors
        self.intervalSeconds = intervalSeconds
    }

    public func start() {
        for index in visitors.indices {
            let thread = HarnessThread.start(self) { $0.run(index) }
            threads.withLock { $0.append(thread) }
        }
    }

    /// Stops after the sessions under way; returns the tally.
    @discardableResult
    public func stop() -> Tally {
        stopping.store(true, ordering: .relaxed)
        for thread in threads.withLock({ value -> [SystemThread] in defer { value = [] }; return value }) { thread.join() }
        return tally
    }

    public var tally: Tally { state.withLock { $0 } }

    private func run(_ index: Int) {
        let visitor = visitors[index]
        // Spread the first visits over one interval.
        var next = Monotonic.seconds() + intervalSeconds * Double(index) / Double(max(1, visitors.count))
        while !stopping.load(ordering: .relaxed) {
            let now = Monotonic.seconds()
            if now < next {
                usleep(UInt32(min(0.2, next - now) * 1e6))
                continue
            }
            let outcome = PhoneSessionRunner.visit(visitor.phone, socketPath: visitor.socketPath, command: .status,
                                                   timeoutMillis: 10_000)
            let decided = Monotonic.seconds()
            state.withLock {
                $0.outcomes[outcome.description, default: 0] += 1
                if outcome == .ok { $0.decisions[visitor.vehicleID, default: []].append(decided) }
            }
            next = max(next + intervalSeconds * Double.random(in: 0.8...1.2), decided)
        }
    }
}
