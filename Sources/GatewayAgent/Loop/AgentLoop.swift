// The agent's single thread: poll(2) on the signal pipe, the link listener and every link, and
// the other sources (console, actuation completions, input sampling), with a timeout that
// brings the once-a-second tick and the sources' deadlines. SIGINT or SIGTERM ends it cleanly.
import Drivers

struct AgentLoop {
    static let tickMillis: UInt64 = 1000

    let service: CarService
    let server: SimulatedLinkServer
    let signals: SignalPipe
    let clock: AgentClock
    let log: AgentLog
    var sources: [any LoopSource] = []

    /// Runs until a termination signal; the caller shuts the service down afterwards.
    func run() throws(Errno) {
        var nextTick = clock.monotonicMillis + Self.tickMillis
        while true {
            let sets = sources.map { $0.pollSet() }
            let now = clock.monotonicMillis
            let wakeAt = sources.compactMap { $0.nextDeadline() }.reduce(nextTick, min)
            let timeout = wakeAt > now ? Int32(clamping: wakeAt - now) : 0
            let linkSet = server.pollSet()
            let ready = try Poll.wait([(signals.descriptor, .readable)] + linkSet + sets.flatMap { $0 }, timeoutMillis: timeout)
            if !ready[0].isEmpty, let signal = signals.drain().first {
                log.info("stopping on signal \(signal)")
                return
            }
            for event in server.process(Array(ready[1..<(1 + linkSet.count)]), nowMillis: clock.monotonicMillis) {
                service.handle(event)
            }
            var offset = 1 + linkSet.count
            for (source, set) in zip(sources, sets) {
                source.process(Array(ready[offset..<(offset + set.count)]), nowMillis: clock.monotonicMillis)
                offset += set.count
            }
            if clock.monotonicMillis >= nextTick {
                service.tick()
                nextTick = clock.monotonicMillis + Self.tickMillis
            }
        }
    }
}
