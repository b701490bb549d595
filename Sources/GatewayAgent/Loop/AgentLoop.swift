// The agent's single thread: poll(2) on the signal pipe, the link listener and every link,
// with a timeout that brings the once-a-second tick. SIGINT or SIGTERM ends it cleanly.
import Drivers

struct AgentLoop {
    static let tickMillis: UInt64 = 1000

    let service: CarService
    let server: SimulatedLinkServer
    let signals: SignalPipe
    let clock: AgentClock
    let log: AgentLog

    /// Runs until a termination signal; the caller shuts the service down afterwards.
    func run() throws(Errno) {
        var nextTick = clock.monotonicMillis + Self.tickMillis
        while true {
            let now = clock.monotonicMillis
            let timeout = nextTick > now ? Int32(clamping: nextTick - now) : 0
            let ready = try Poll.wait([(signals.descriptor, .readable)] + server.pollSet(), timeoutMillis: timeout)
            if !ready[0].isEmpty, let signal = signals.drain().first {
                log.info("stopping on signal \(signal)")
                return
            }
            for event in server.process(Array(ready.dropFirst()), nowMillis: clock.monotonicMillis) {
                service.handle(event)
            }
            if clock.monotonicMillis >= nextTick {
                service.tick()
                nextTick = clock.monotonicMillis + Self.tickMillis
            }
        }
    }
}
