// The agent's single thread: poll(2) on the signal pipe, the link listener and every link, and
// the other sources (console, actuation completions, input sampling), with a timeout that
// brings the once-a-second tick and the sources' deadlines. SIGINT or SIGTERM ends it cleanly.
//
// Each pass is one round: serve everything ready, then CarService.finishRound commits the
// round's audit rows in one transaction and only then lets the round's sends, actuations and
// closes out. While anything waits for a commit the next poll does not sleep (timeout 0), so
// under load a batch holds whatever arrived meanwhile, and idle costs nothing extra. Rows
// that hold back no effect are committed with the next round that has effects, or as soon
// as a poll finds nothing to do.
import Drivers

struct AgentLoop {
    static let tickMillis: UInt64 = 1000

    let service: CarService
    let server: any LinkServer
    /// nil in tests that drive rounds themselves.
    let signals: SignalPipe?
    let clock: AgentClock
    let log: AgentLog
    var sources: [any LoopSource] = []

    /// Runs until a termination signal; the caller shuts the service down afterwards.
    func run() throws(Errno) {
        var nextTick = clock.monotonicMillis + Self.tickMillis
        while try round(nextTick: &nextTick) {}
    }

    /// One wait and what it brought. `maxWaitMillis` caps the sleep (tests); false when a
    /// termination signal arrived (nothing else is served then).
    func round(nextTick: inout UInt64, maxWaitMillis: UInt64 = .max) throws(Errno) -> Bool {
        let sets = sources.map { $0.pollSet() }
        let now = clock.monotonicMillis
        let deadlines = sources.compactMap { $0.nextDeadline() } + [server.nextDeadline()].compactMap { $0 }
        let wakeAt = min(deadlines.reduce(nextTick, min), now + min(maxWaitMillis, UInt64(Int32.max)))
        let timeout = service.hasHeldWork || wakeAt <= now ? 0 : Int32(clamping: wakeAt - now)
        let signalSet = signals.map { [($0.descriptor, PollEvents.readable)] } ?? []
        let linkSet = server.pollSet()
        let ready = try Poll.wait(signalSet + linkSet + sets.flatMap { $0 }, timeoutMillis: timeout)
        if let signals, !ready[0].isEmpty, let signal = signals.drain().first {
            log.info("stopping on signal \(signal)")
            return false
        }
        var offset = signalSet.count
        for event in server.process(Array(ready[offset..<(offset + linkSet.count)]), nowMillis: clock.monotonicMillis) {
            service.handle(event)
        }
        service.admitNewcomers()
        for notice in server.takeNotices() { log.info("link: \(notice)") }
        offset += linkSet.count
        for (source, set) in zip(sources, sets) {
            source.process(Array(ready[offset..<(offset + set.count)]), nowMillis: clock.monotonicMillis)
            offset += set.count
        }
        if clock.monotonicMillis >= nextTick {
            service.tick()
            nextTick = clock.monotonicMillis + Self.tickMillis
        }
        service.finishRound(idle: ready.allSatisfy(\.isEmpty))
        return true
    }
}
