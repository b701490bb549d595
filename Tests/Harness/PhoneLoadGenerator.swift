// N phones at once against one agent: each phone is a thread doing complete visits in a loop
// (PhoneSessionRunner), until a session budget is spent or `stop()` is called. Every ending
// is counted by outcome, so a run reports "12,000 ok, 14 busy" rather than a bare rate.
//
// A phone that is told `busy` (all link slots taken, or the actuator mid-pulse) waits a few
// milliseconds before its next visit, as an app would; busy does not count toward the car's
// rate limits, so valid owners can never trip them this way. If `rateLimited` shows up in a
// tally, that is a finding about the car, not noise.
#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import Drivers
import Protocol

public final class PhoneLoadGenerator: Sendable {
    public let phones: [PhoneConfiguration]
    public let socketPath: String
    /// Cycled per phone: visit k of a phone sends commands[k % count]. Mostly `status` keeps
    /// the actuator (one 300 ms pulse at a time) from being the bottleneck being measured.
    public let commands: [CommandCode]
    public let timeoutMillis: UInt64

    private let budget: Int
    private let claimed = Atomic<Int>(0)
    private let finished = Atomic<Int>(0)
    private let stopping = Atomic<Bool>(false)
    /// Phone threads started and not yet returned.
    private let active = Atomic<Int>(0)
    private let counts = Mutex<[LoadOutcome: Int]>([:])
    /// CPU the phone threads themselves spent (their thread clocks), in microseconds.
    private let cpuMicros = Atomic<Int>(0)
    private let threads = Mutex<[SystemThread]>([])

    /// `sessions`: total visits over all phones (nil: until `stop()`).
    public init(phones: [PhoneConfiguration], socketPath: String, commands: [CommandCode] = [.status],
                sessions: Int? = nil, timeoutMillis: UInt64 = 10_000) {
        precondition(!phones.isEmpty && !commands.isEmpty)
        self.phones = phones
        self.socketPath = socketPath
        self.commands = commands
        self.budget = sessions ?? Int.max
        self.timeoutMillis = timeoutMillis
    }

    /// Starts one thread per phone.
    public func start() {
        for index in phones.indices {
            active.add(1, ordering: .relaxed)
            let phone = PhoneThread(generator: self, index: index)
            let thread: SystemThread
            do { thread = try SystemThread.start(name: "phone-\(index)") { phone.run() } } catch { preconditionFailure("\(error)") }
            threads.withLock { $0.append(thread) }
        }
    }

    /// Visits finished so far (every outcome).
    public var completed: Int { finished.load(ordering: .relaxed) }

    /// True once every phone thread has returned (budget spent or stopped).
    public var isFinished: Bool { active.load(ordering: .acquiring) == 0 }

    /// CPU milliseconds spent by the phone threads only (not other threads of this process).
    public var phonesCPUMillis: Int { cpuMicros.load(ordering: .relaxed) / 1000 }

    /// A copy of the counts so far.
    public var tally: LoadTally { LoadTally(counts: counts.withLock { $0 }) }

    /// Asks every phone to stop after its current visit.
    public func stop() { stopping.store(true, ordering: .relaxed) }

    /// Waits for every phone thread (after the budget is spent or `stop()`).
    public func join() {
        for thread in threads.withLock({ $0 }) { thread.join() }
        threads.withLock { $0.removeAll() }
    }

    /// The next visit's ticket, or nil when the budget is spent or a stop was asked.
    fileprivate func claim() -> Int? {
        guard !stopping.load(ordering: .relaxed) else { return nil }
        let ticket = claimed.wrappingAdd(1, ordering: .relaxed).oldValue
        return ticket < budget ? ticket : nil
    }

    fileprivate func phoneReturned() { active.subtract(1, ordering: .releasing) }

    fileprivate func record(_ outcome: LoadOutcome, cpuSeconds: Double) {
        cpuMicros.add(Int(cpuSeconds * 1e6), ordering: .relaxed)
        counts.withLock { $0[outcome, default: 0] += 1 }
        finished.add(1, ordering: .relaxed)
    }
}

/// One phone's loop; owns nothing but its index and visit count.
private final class PhoneThread: Sendable {
    let generator: PhoneLoadGenerator
    let index: Int

    init(generator: PhoneLoadGenerator, index: Int) {
        self.generator = generator
        self.index = index
    }

    func run() {
        let phone = generator.phones[index]
        var visit = index
        while generator.claim() != nil {
            let command = generator.commands[visit % generator.commands.count]
            visit += 1
            let cpuBefore = Monotonic.threadCPUSeconds()
            let outcome = PhoneSessionRunner.visit(phone, socketPath: generator.socketPath, command: command,
                                                   timeoutMillis: generator.timeoutMillis)
            generator.record(outcome, cpuSeconds: Monotonic.threadCPUSeconds() - cpuBefore)
            if outcome == .fault("busy") || outcome == .refused("busy") { usleep(UInt32(2_000 + index * 500)) }
        }
        generator.phoneReturned()
    }
}

/// What a run produced, by outcome.
public struct LoadTally: Sendable, Equatable, CustomStringConvertible {
    public let counts: [LoadOutcome: Int]

    public init(counts: [LoadOutcome: Int]) { self.counts = counts }

    public var total: Int { counts.values.reduce(0, +) }
    public var ok: Int { counts[.ok] ?? 0 }
    public func count(_ outcome: LoadOutcome) -> Int { counts[outcome] ?? 0 }

    /// Outcomes other than ok and busy: each one is a failure to explain.
    public var unexpected: [LoadOutcome: Int] { counts.filter { ![.ok, .fault("busy"), .refused("busy")].contains($0.key) } }

    /// "ok=1200 fault.busy=3" in a stable order.
    public var description: String {
        counts.sorted { $0.key.description < $1.key.description }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
    }
}
