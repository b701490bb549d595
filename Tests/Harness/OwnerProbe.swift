// The enrolled owner standing at the car during an attack: one complete session (Hello,
// Challenge, AuthResponse, one command, Response) every `intervalMillis`, on its own thread,
// each timed from connect to Response. An attempt counts as a success when the car answered
// the command with ok within `deadlineMillis` (the target: a session within 1 s).
#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import Drivers
import Protocol

public struct OwnerProbeResult: Sendable {
    public var attempts: Int
    /// ok within the deadline.
    public var successes: Int
    /// Every ending by name ("ok", "late.ok", "refused.busy", "link.timedOut", ...).
    public var outcomes: [String: Int]
    /// Connect-to-Response time of every attempt, in order.
    public var latenciesMillis: [UInt64]

    public init(attempts: Int = 0, successes: Int = 0, outcomes: [String: Int] = [:], latenciesMillis: [UInt64] = []) {
        self.attempts = attempts
        self.successes = successes
        self.outcomes = outcomes
        self.latenciesMillis = latenciesMillis
    }

    public var successPercent: Double { attempts > 0 ? Double(successes) * 100 / Double(attempts) : 0 }

    /// "58/60 ok within 1000 ms (96.7 %); refused.busy 2" for notes and failure messages.
    public func summary(deadlineMillis: UInt64 = 1000) -> String {
        let others = outcomes.filter { $0.key != "ok" }.sorted { $0.key < $1.key }
            .map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        let sorted = latenciesMillis.sorted()
        let median = sorted.isEmpty ? 0 : sorted[sorted.count / 2]
        let worst = sorted.last ?? 0
        let percent = (successPercent * 10).rounded() / 10
        return "\(successes)/\(attempts) ok within \(deadlineMillis) ms (\(percent) %), median \(median) ms, max \(worst) ms"
            + (others.isEmpty ? "" : "; " + others)
    }
}

public final class OwnerProbe: Sendable {
    public let phone: PhoneConfiguration
    public let socketPath: String
    public let intervalMillis: UInt64
    public let deadlineMillis: UInt64
    public let command: CommandCode
    /// As a phone app does with `busy` (the car's condition, not a refusal: protocol.md rule
    /// H1a): try again after this many milliseconds while the attempt's deadline lasts. nil:
    /// one try per attempt.
    public let retryBusyAfterMillis: UInt64?

    private let stopping = Atomic<Bool>(false)
    private let state = Mutex<OwnerProbeResult>(OwnerProbeResult(attempts: 0, successes: 0, outcomes: [:], latenciesMillis: []))
    private let thread = Mutex<SystemThread?>(nil)

    public init(phone: PhoneConfiguration, socketPath: String, intervalMillis: UInt64 = 1000,
                deadlineMillis: UInt64 = 1000, command: CommandCode = .status, retryBusyAfterMillis: UInt64? = nil) {
        self.retryBusyAfterMillis = retryBusyAfterMillis
        self.phone = phone
        self.socketPath = socketPath
        self.intervalMillis = max(1, intervalMillis)
        // Under a sanitizer the phone's own crypto in the test process runs several times slower.
        self.deadlineMillis = deadlineMillis * SanitizerAllowance.timeScale
        self.command = command
    }

    public func start() {
        let created = HarnessThread.start(self) { $0.run() }
        thread.withLock { $0 = created }
    }

    /// Stops after the attempt under way and returns the tally.
    @discardableResult
    public func stop() -> OwnerProbeResult {
        stopping.store(true, ordering: .relaxed)
        if let running = thread.withLock({ value -> SystemThread? in defer { value = nil }; return value }) {
            running.join()
        }
        return result
    }

    /// The tally so far.
    public var result: OwnerProbeResult { state.withLock { $0 } }

    fileprivate func run() {
        var next = Self.nowMillis()
        while !stopping.load(ordering: .relaxed) {
            let started = Self.nowMillis()
            // A generous link timeout: a late answer is still counted (as late), not lost.
            var outcome = PhoneSessionRunner.visit(phone, socketPath: socketPath, command: command,
                                                   timeoutMillis: max(3000, deadlineMillis * 3))
            while let pause = retryBusyAfterMillis, outcome == .refused("busy"),
                  Self.nowMillis() + pause < started + deadlineMillis, !stopping.load(ordering: .relaxed) {
                Self.sleep(millis: pause)
                outcome = PhoneSessionRunner.visit(phone, socketPath: socketPath, command: command,
                                                   timeoutMillis: max(3000, deadlineMillis * 3))
            }
            let elapsed = Self.nowMillis() - started
            let ok = outcome == .ok && elapsed <= deadlineMillis
            let name = outcome == .ok && !ok ? "late.ok" : outcome.description
            state.withLock {
                $0.attempts += 1
                if ok { $0.successes += 1 }
                $0.outcomes[name, default: 0] += 1
                $0.latenciesMillis.append(elapsed)
            }
            next += intervalMillis
            let now = Self.nowMillis()
            if next > now {
                Self.sleep(millis: next - now)
            } else {
                next = now
            }
        }
    }

    private static func sleep(millis: UInt64) {
        var request = timespec(tv_sec: Int(millis / 1000), tv_nsec: Int(millis % 1000) * 1_000_000)
        var remaining = timespec()
        while nanosleep(&request, &remaining) != 0 && errno == EINTR { request = remaining }
    }

    static func nowMillis() -> UInt64 {
        var mono = timespec()
        clock_gettime(CLOCK_MONOTONIC, &mono)
        return UInt64(mono.tv_sec) * 1000 + UInt64(mono.tv_nsec) / 1_000_000
    }
}
