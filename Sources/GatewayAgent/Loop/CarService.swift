// The car side of the simulated link: feeds link events to the protocol engine and carries out
// the engine's actions (send, actuate then complete, audit, close). Single-threaded: the
// AgentLoop calls it from its poll loop.
import Drivers
import Protocol

final class CarService {
    /// A connection that has not established a session within this time is closed, so idle
    /// connections cannot hold the link slots (the challenge lifetime is 10 s).
    static let handshakeTimeoutMillis: UInt64 = 15_000

    private var engine: CarProtocolEngine
    private let server: SimulatedLinkServer
    private let actuator: any VehicleActuator
    private let keys: KeyService
    private let audit: AuditSink
    private let clock: AgentClock
    private let log: AgentLog
    /// Told the vehicle state after every actuation (the cloud link reports changes).
    var stateObserver: ((VehicleState) -> Void)?
    /// Called once a second from `tick`, on the agent's thread (the cloud link's inbox).
    var tickObserver: (() -> Void)?

    /// The vehicle state as the actuator knows it.
    var vehicleState: VehicleState { actuator.state }

    init(engine: CarProtocolEngine, server: SimulatedLinkServer, actuator: any VehicleActuator, keys: KeyService,
         audit: AuditSink, clock: AgentClock, log: AgentLog) {
        self.engine = engine
        self.server = server
        self.actuator = actuator
        self.keys = keys
        self.audit = audit
        self.clock = clock
        self.log = log
    }

    func handle(_ event: SimulatedLinkServer.Event) {
        switch event {
        case .connected(let link):
            log.debug("\(link) connected")
        case .message(let link, let bytes):
            // Messages read before the agent closed this link are moot.
            guard server.isOpen(link) else { return }
            execute(engine.receive(bytes, from: link, now: clock.now()))
        case .closed(let link, let reason):
            // A phone hanging up is routine; a malformed frame or an I/O error is news.
            log.line(reason == .peerClosed ? .debug : .info, "\(link) closed: \(reason)")
            execute(engine.linkClosed(link, now: clock.now()))
        case .refusedBusy:
            log.info("connection refused: busy (\(server.configuration.maxConnections) links open)")
        }
    }

    /// Once a second: engine housekeeping, then connections that never authenticated.
    func tick() {
        let now = clock.now()
        execute(engine.tick(now: now))
        keys.tick(now: now)
        audit.flush(now: now)
        tickObserver?()
        let established = Set(engine.establishedLinks)
        for link in server.links where !established.contains(link) {
            guard let since = server.connectedAt(link), now.monotonicMillis >= since + Self.handshakeTimeoutMillis else { continue }
            log.info("\(link) closed: no session within \(Self.handshakeTimeoutMillis / 1000) s")
            server.close(link)
            execute(engine.linkClosed(link, now: now))
        }
    }

    func shutdown() {
        let now = clock.now()
        for link in server.links { execute(engine.linkClosed(link, now: now)) }
        server.shutdown()
        keys.shutdown(now: now)
        audit.flush(now: now, force: true)
    }

    /// Runs `body` on the engine and carries out the actions it returns: the entry point for
    /// what the car starts itself (control socket, console, pairing button).
    func withEngine<T>(_ body: (inout CarProtocolEngine, ProtocolTime) -> (T, [CarAction])) -> T {
        let (value, actions) = body(&engine, clock.now())
        execute(actions)
        return value
    }

    /// A pulse started by `.perform` has ended (called on the loop thread).
    func actuationFinished(_ request: CommandRequest, _ outcome: CommandOutcome) {
        execute(completion(of: request, outcome))
    }

    private func completion(of request: CommandRequest, _ outcome: CommandOutcome) -> [CarAction] {
        // A status read that went well changes nothing: debug. Actuations and faults: info.
        let news = request.command != .status || outcome.fault != nil
        log.line(news ? .info : .debug,
                 "\(request.link) \(request.command): \(outcome.summary), result \(outcome.fault?.name ?? "ok"), state \(outcome.state)")
        let actions = engine.complete(request.token, result: outcome.fault, vehicleState: outcome.state, now: clock.now())
        stateObserver?(outcome.state)
        return actions
    }

    /// Runs actions in order; actions they cause (a completion's Response) run after them.
    private func execute(_ actions: [CarAction]) {
        var queue = actions[...]
        while let action = queue.popFirst() {
            switch action {
            case .send(let link, let bytes):
                if case .closed(_, let reason)? = server.send(bytes, to: link) {
                    log.info("\(link) closed: \(reason)")
                    queue += engine.linkClosed(link, now: clock.now())
                }
            case .authenticated(let grant):
                log.debug("\(grant.link) session established: key \(grant.keyID), \(grant.record.role), permissions \(grant.record.permissions)")
                queue += keys.authenticated(grant, engine: &engine, now: clock.now())
            case .perform(let request):
                // nil: a pulse started on the actuation worker; `actuationFinished` completes it.
                guard let outcome = actuator.start(request) else { continue }
                queue += completion(of: request, outcome)
            case .audit(let record):
                audit.record(record)
            case .closeLink(let link):
                server.close(link)
                log.info("\(link) closed by the car")
            case .enroll(let request):
                queue += keys.enroll(request, engine: &engine, now: clock.now())
            case .revoke(let request):
                queue += keys.revoke(request, engine: &engine, vehicleState: actuator.state, now: clock.now())
            }
        }
    }
}
