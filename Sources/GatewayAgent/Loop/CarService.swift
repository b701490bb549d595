// The car side of the simulated link: feeds link events to the protocol engine and carries out
// the engine's actions (send, actuate then complete, audit, close). Single-threaded: the
// AgentLoop calls it from its poll loop.
//
// Durability rule: an access decision is in the event log before the phone hears the result
// and before an actuator moves. The engine's actions are therefore split: audit records join
// the round's batch, and effects on the world (sends, actuations, link closes) are held, in
// order, until `finishRound` has committed the batch (one fsync for the whole round). The
// engine sometimes lists a send before its record ([send, authenticated, audit]), so the
// whole round's effects wait, not only those after a record. What a released effect causes
// (a status command's completion, a failed send's close) joins the next round's batch.
import Drivers
import Protocol

final class CarService {
    /// A connection that has not established a session within this time is closed, so idle
    /// connections cannot hold the link slots (the challenge lifetime is 10 s).
    static let handshakeTimeoutMillis: UInt64 = 15_000
    /// Records that gate no effect wait for a commit at most this many (see `finishRound`).
    static let maxDeferredRecords = 256

    private var engine: CarProtocolEngine
    private let server: any LinkServer
    private let actuator: any VehicleActuator
    private let keys: KeyService
    private let audit: AuditSink
    private let clock: AgentClock
    private let log: AgentLog
    /// Effects waiting for the round's commit, in the order the engine asked for them.
    private var held: [Effect] = []
    /// Links with a close in `held`: their protocol state is gone, so messages still read
    /// from them are moot (as they were when the close was immediate).
    private var closing: Set<LinkID> = []
    /// Told the vehicle state after every actuation (the cloud link reports changes).
    var stateObserver: ((VehicleState) -> Void)?
    /// Called once a second from `tick`, on the agent's thread (the cloud link's inbox).
    var tickObserver: (() -> Void)?
    /// UWB ranging and the proximity policy, when the car has a UWB module (board file "uwb",
    /// or --simulate-uwb). Without it, commands are decided without distance.
    var uwb: UWBService?
    /// Starts a pulse the car decides itself (passive entry, walk-away lock); set by start-up.
    var automaticActuation: ((Actuation, KeyID?, String) -> Void)?

    /// The vehicle state as the actuator knows it.
    var vehicleState: VehicleState { actuator.state }

    /// Records or effects wait for `finishRound`: the loop then polls without waiting, so a
    /// batch grows with whatever else is ready instead of by waiting for more.
    var hasHeldWork: Bool { audit.hasPending || !held.isEmpty }

    /// Commits and rows per commit of the audit log (status, tests, benchmarks).
    var auditStats: AuditCommitStats { audit.stats }

    init(engine: CarProtocolEngine, server: any LinkServer, actuator: any VehicleActuator, keys: KeyService,
         audit: AuditSink, clock: AgentClock, log: AgentLog) {
        self.engine = engine
        self.server = server
        self.actuator = actuator
        self.keys = keys
        self.audit = audit
        self.clock = clock
        self.log = log
    }

    /// The open links with what the radio reports about them (console `links`, `status`).
    var linkSnapshot: LinkSnapshot {
        let established = Set(engine.establishedLinks)
        let entries = server.links.compactMap { link in
            server.facts(of: link).map { LinkSnapshot.Entry(id: link, facts: $0, established: established.contains(link)) }
        }
        return LinkSnapshot(endpoint: server.endpointDescription, maxLinks: server.maxConnections, links: entries)
    }

    func handle(_ event: LinkEvent) {
        switch event {
        case .connected(let link):
            log.debug("\(link) connected")
        case .message(let link, let bytes):
            // Messages read before the agent closed this link are moot.
            guard server.isOpen(link), !closing.contains(link) else { return }
            // Refusals carry the vehicle state: it must be the car's, never a default.
            engine.observeVehicleState(actuator.state)
            execute(engine.receive(bytes, from: link, now: clock.now()))
        case .closed(let link, let reason):
            // A phone hanging up is routine; a malformed frame or an I/O error is news.
            log.line(reason.isRoutine ? .debug : .info, "\(link) closed: \(reason)")
            execute(engine.linkClosed(link, now: clock.now()))
        case .refusedBusy:
            log.info("connection refused: busy (\(server.maxConnections) links open)")
        }
    }

    /// Once a second: engine housekeeping, then connections that never authenticated.
    func tick() {
        let now = clock.now()
        engine.observeVehicleState(actuator.state)
        execute(engine.tick(now: now))
        keys.tick(now: now)
        if let uwb, uwb.walkAway(nowMillis: now.monotonicMillis, state: actuator.state) {
            log.info("uwb: every key that was near has walked away: locking")
            audit.commit()
            automaticActuation?(.lock, nil, "walk-away lock")
        }
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

    /// The end of a loop round: one commit for the round's records, then the held effects in
    /// the order they were asked for. What those effects cause is held for the next round.
    ///
    /// `idle`: the round's wait brought nothing (the loop would sleep next). Records that gate
    /// no effect (a session the phone closed, a summary row) then need not be committed alone
    /// while work keeps arriving: they ride along with the next commit an effect needs, or go
    /// out before the loop sleeps, so under load they share an fsync and when idle they do not
    /// wait. Either way they are on disk within a round or two, as any record is.
    func finishRound(idle: Bool = true) {
        guard !held.isEmpty || idle || audit.pendingCount >= Self.maxDeferredRecords else { return }
        audit.commit()
        let effects = held
        held.removeAll(keepingCapacity: true)
        for effect in effects { release(effect) }
    }

    /// Commits the audit rows waiting for the round's end now, for a part of the agent about
    /// to write an event of its own synchronously (vehicle events): sequence order is the
    /// order of events. Held effects still wait for the round's end.
    func commitPendingRows() { audit.commit() }

    func shutdown() {
        // Answer what was decided before the stop, records first as always. The loop ends
        // between rounds, so only answers and closes can be held here; no pulse may start
        // now (the actuation worker has finished), so a held perform would be dropped.
        held.removeAll { effect in
            guard case .perform(let request) = effect else { return false }
            log.warn("\(request.link) \(request.command) not started: the agent is stopping")
            return true
        }
        // A released answer can cause one more round of records (a link found closed).
        for _ in 0..<3 where hasHeldWork { finishRound() }
        let now = clock.now()
        for link in server.links { execute(engine.linkClosed(link, now: now)) }
        audit.flush(now: now, force: true)
        audit.commit()
        // The links are gone: nothing may start now (the actuation worker has finished).
        held.removeAll()
        closing.removeAll()
        server.shutdown()
        keys.shutdown(now: now)
        log.info("audit log: \(AuditCommitStats.line(audit.stats))")
    }

    /// Runs `body` on the engine and carries out the actions it returns: the entry point for
    /// what the car starts itself (control socket, console, pairing button, cloud). The body
    /// may write the keychain with its own event (a revocation), so the rows waiting for this
    /// round are committed first: sequence numbers stay in the order things happened. Its own
    /// rows are committed before returning, because the caller answers at once (a pairing
    /// code on the control socket) and that answer is not an effect this service holds.
    /// These calls are rare (a person or the cloud), so the extra commit costs nothing.
    func withEngine<T>(_ body: (inout CarProtocolEngine, ProtocolTime) -> (T, [CarAction])) -> T {
        audit.commit()
        let (value, actions) = body(&engine, clock.now())
        execute(actions)
        audit.commit()
        return value
    }

    /// The door handle was pulled: unlock for the nearest key in the Unlock zone, if any.
    func doorHandlePulled() {
        guard let uwb else {
            log.debug("door handle pulled: no UWB module, passive entry is off")
            return
        }
        audit.commit()
        guard let key = uwb.passiveEntry(nowMillis: clock.monotonicMillis) else {
            log.info("door handle pulled: no key in the Unlock zone, passive entry refused")
            return
        }
        log.info("door handle pulled: key \(key) in the Unlock zone, passive entry")
        automaticActuation?(.unlock, key, "passive entry")
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

    /// An action that reaches outside the agent: held until the round's records are durable.
    private enum Effect {
        case send(LinkID, Bytes)
        case perform(CommandRequest)
        case close(LinkID)
    }

    /// Runs the engine's actions in order: records join the batch, effects are held, key
    /// actions run now; actions they cause (a keychain answer) run after them.
    private func execute(_ actions: [CarAction]) {
        var queue = actions[...]
        while let action = queue.popFirst() {
            switch action {
            case .send(let link, let bytes):
                held.append(.send(link, bytes))
            case .perform(let request):
                // Distance is checked when the engine has accepted the command, before anything
                // moves; a refusal completes the command with notInProximity instead.
                if let uwb, let decision = uwb.authorize(request, nowMillis: clock.monotonicMillis), !decision.isAllowed {
                    let why = UWBService.reason(decision)?.rawValue ?? "refused"
                    log.info("\(request.link) \(request.command) refused: not in proximity (\(why))")
                    queue += engine.complete(request.token, result: .notInProximity, vehicleState: actuator.state, now: clock.now())
                    continue
                }
                held.append(.perform(request))
            case .closeLink(let link):
                held.append(.close(link))
                closing.insert(link)
            case .audit(let record):
                audit.record(record)
            case .authenticated(let grant):
                log.debug("\(grant.link) session established: key \(grant.keyID), \(grant.record.role), permissions \(grant.record.permissions)")
                // Remembering a share writes the keychain with its event, synchronously: the
                // rows before it go first so the sequence stays in order.
                if grant.presentedCertificate != nil { audit.commit() }
                queue += keys.authenticated(grant, engine: &engine, now: clock.now())
            case .enroll(let request):
                // Keychain writes stay synchronous (the key and its event in one transaction).
                audit.commit()
                queue += keys.enroll(request, engine: &engine, now: clock.now())
            case .revoke(let request):
                audit.commit()
                queue += keys.revoke(request, engine: &engine, vehicleState: actuator.state, now: clock.now())
            case .startRanging(let grant):
                uwb?.start(grant, nowMillis: clock.monotonicMillis)
            case .stopRanging(let link):
                uwb?.stop(link)
            }
        }
    }

    /// Carries out one held effect (after the commit); what it causes goes through `execute`.
    private func release(_ effect: Effect) {
        switch effect {
        case .send(let link, let bytes):
            if case .closed(_, let reason)? = server.send(bytes, to: link) {
                log.info("\(link) closed: \(reason)")
                execute(engine.linkClosed(link, now: clock.now()))
            }
        case .perform(let request):
            // nil: a pulse started on the actuation worker; `actuationFinished` completes it.
            guard let outcome = actuator.start(request) else { return }
            execute(completion(of: request, outcome))
        case .close(let link):
            server.close(link)
            closing.remove(link)
            log.info("\(link) closed by the car")
        }
    }
}
