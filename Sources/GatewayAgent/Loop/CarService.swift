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
    /// A connection that has not established a session within this time is closed, so
    /// connections that say nothing cannot hold the link slots (config
    /// link.handshakeDeadlineSeconds; a phone needs well under a second).
    var handshakeDeadlineMillis: UInt64 = 3_000
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
    /// `run --conformance`: sees every message, the engine's answers and every link's end,
    /// after the engine decided; it changes nothing the car does.
    var conformance: ConformanceMonitor?

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
            engine.linkOpened(link, peerAddress: server.facts(of: link)?.peerAddress)
            conformance?.opened(link, transport: server.facts(of: link)?.transport ?? "unknown", now: clock.now())
            // Decided after the rest of this batch (`admitNewcomers`): a phone's Hello read in
            // the same batch must put it in its handshake before anyone picks a victim.
            newcomers.append(link)
        case .message(let link, let bytes):
            // Messages read before the agent closed this link are moot.
            guard server.isOpen(link), !closing.contains(link) else { return }
            // Refusals carry the vehicle state: it must be the car's, never a default.
            engine.observeVehicleState(actuator.state)
            let now = clock.now()
            let answer = engine.receive(bytes, from: link, now: now)
            conformance?.message(bytes, on: link, now: now, answer: answer)
            execute(answer, observed: true)
        case .closed(let link, let reason):
            // A phone hanging up is routine; a malformed frame or an I/O error is news.
            log.line(reason.isRoutine ? .debug : .info, "\(link) closed: \(reason)")
            execute(engine.linkClosed(link, now: clock.now()))
            conformance?.ended(link, ConformanceMonitor.end(reason), now: clock.now())
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
        if reclaimedSinceTick + refusedSinceTick > 0 {
            log.info("links: \(reclaimedSinceTick) slot(s) reclaimed from connections without a session, "
                     + "\(refusedSinceTick) newcomer(s) refused busy in the last tick (\(server.maxConnections) links)")
            reclaimedSinceTick = 0
            refusedSinceTick = 0
        }
        for link in server.links where !closing.contains(link) {
            let phase = engine.phase(of: link)
            guard phase == .idle || phase == .handshaking, let since = server.connectedAt(link),
                  now.monotonicMillis >= since + handshakeDeadlineMillis else { continue }
            log.info("\(link) closed: no session within \(handshakeDeadlineMillis) ms")
            server.close(link)
            execute(engine.linkClosed(link, now: now))
            conformance?.ended(link, .handshakeDeadline(millis: handshakeDeadlineMillis), now: now)
        }
    }

    /// A newcomer over the link limit (the server holds a spare slot for this decision): the
    /// oldest link that never sent a valid Hello is closed for it, else the oldest one still
    /// in its handshake, those repeating Hellos or failing first. Sessions and enrollments are never reclaimed: if every other link
    /// holds one, the newcomer is told `busy` and closed. So connections that say nothing, or
    /// trickle, cannot keep a phone out; they only ever hold a slot for the handshake deadline.
    /// A link connected this recently that has not spoken yet is not taken for silent: a
    /// phone's Hello follows its connection within milliseconds, and a flood whose links are
    /// all in their handshake would otherwise always reclaim the phone that just connected.
    static let silenceGraceMillis: UInt64 = 1_000

    /// The engine's reclaim order, adjusted for the grace period. Lowest first: silent past the grace (0), a handshake that repeated a Hello or failed
    /// (1), silent within the grace (2), a clean handshake (3): a phone that has said Hello is
    /// the last to go, after every connection that has said nothing.
    private func reclaimOrder(of link: LinkID, now: UInt64) -> Int? {
        guard let order = engine.reclaimOrder(of: link) else { return nil }
        switch order {
        case 0:
            if let since = server.connectedAt(link), now < since + Self.silenceGraceMillis { return 2 }
            return 0
        case 1: return 1
        default: return 3
        }
    }

    /// Links that connected in the batch just handled, waiting for the admission decision.
    private var newcomers: [LinkID] = []
    /// Admission decisions since the last tick, for one summary line instead of one a link.
    private var reclaimedSinceTick = 0
    private var refusedSinceTick = 0

    /// Runs the admission decision for every link that connected in the batch just handled
    /// (the loop calls it after a batch of link events).
    func admitNewcomers() {
        let waiting = newcomers
        newcomers.removeAll(keepingCapacity: true)
        for link in waiting where server.isOpen(link) && !closing.contains(link) { admit(link) }
    }

    private func admit(_ newcomer: LinkID) {
        let open = server.links.filter { !closing.contains($0) }
        guard open.count > server.maxConnections else { return }
        let others = open.filter { $0 != newcomer }.sorted {
            (server.connectedAt($0) ?? 0, $0.rawValue) < (server.connectedAt($1) ?? 0, $1.rawValue)
        }
        let now = clock.now()
        let victim = others.compactMap { link in reclaimOrder(of: link, now: now.monotonicMillis).map { (link, $0) } }
            .min { $0.1 < $1.1 }?.0  // `min` keeps the first of equals: the oldest
        if let victim {
            // Under a flood this happens thousands of times a second: one summary line a
            // tick, the links themselves only at debug.
            log.debug("\(victim) closed: its slot went to \(newcomer) (no session, \(server.maxConnections) links open)")
            reclaimedSinceTick += 1
            server.close(victim)
            execute(engine.linkClosed(victim, now: now))
            conformance?.ended(victim, .reclaimed, now: now)
        } else if others.contains(where: { engine.holdsSharedSession($0) }) {
            // Guests hold every slot: the newcomer keeps the spare one for its handshake
            // deadline and its Hello decides. An owner's ends the oldest guest session (rule
            // H1); anyone else's is answered busy. Guests can never keep the owner out.
            log.debug("\(newcomer) held in the spare slot: every other link holds a session, some of guests")
        } else {
            log.debug("\(newcomer) refused: busy (\(server.maxConnections) sessions open)")
            refusedSinceTick += 1
            // Cleartext and before any protocol state: nothing to record first.
            _ = server.send(FaultMessage(.busy).encoded(), to: newcomer)
            server.close(newcomer)
            execute(engine.linkClosed(newcomer, now: now))
            conformance?.ended(newcomer, .closedByCar, now: now)
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
        let recorded = audit.commitRound()
        let effects = held
        held.removeAll(keepingCapacity: true)
        for effect in effects {
            // The round's access decisions are not in the event log: nothing moves, the phone
            // hears internalError (store repair: AuditBatch.swift).
            if !recorded, case .perform(let request) = effect {
                log.error("\(request.link) \(request.command) refused: its audit record could not be written")
                execute(engine.complete(request.token, result: .internalError, vehicleState: actuator.state, now: clock.now()))
                continue
            }
            release(effect)
        }
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
        for link in server.links {
            execute(engine.linkClosed(link, now: now))
            conformance?.ended(link, .agentStopped, now: now)
        }
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
    /// actions run now; actions they cause (a keychain answer) run after them. `observed`: the
    /// conformance monitor has already seen them (a message's answer).
    private func execute(_ actions: [CarAction], observed alreadySeen: Bool = false) {
        if !alreadySeen { conformance?.carActions(actions, now: clock.now()) }
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
                    queue += observed(engine.complete(request.token, result: .notInProximity, vehicleState: actuator.state, now: clock.now()))
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
                queue += observed(keys.authenticated(grant, engine: &engine, now: clock.now()))
            case .enroll(let request):
                // Keychain writes stay synchronous (the key and its event in one transaction).
                audit.commit()
                queue += observed(keys.enroll(request, engine: &engine, now: clock.now()))
            case .revoke(let request):
                audit.commit()
                queue += observed(keys.revoke(request, engine: &engine, vehicleState: actuator.state, now: clock.now()))
            case .startRanging(let grant):
                uwb?.start(grant, nowMillis: clock.monotonicMillis)
            case .stopRanging(let link):
                uwb?.stop(link)
            }
        }
    }

    /// Actions the engine returned while others were being carried out, shown to the
    /// conformance monitor like any others.
    private func observed(_ actions: [CarAction]) -> [CarAction] {
        conformance?.carActions(actions, now: clock.now())
        return actions
    }

    /// Carries out one held effect (after the commit); what it causes goes through `execute`.
    private func release(_ effect: Effect) {
        switch effect {
        case .send(let link, let bytes):
            if case .closed(_, let reason)? = server.send(bytes, to: link) {
                log.info("\(link) closed: \(reason)")
                execute(engine.linkClosed(link, now: clock.now()))
                conformance?.ended(link, ConformanceMonitor.end(reason), now: clock.now())
            }
        case .perform(let request):
            // nil: a pulse started on the actuation worker; `actuationFinished` completes it.
            guard let outcome = actuator.start(request) else { return }
            execute(completion(of: request, outcome))
        case .close(let link):
            server.close(link)
            closing.remove(link)
            log.info("\(link) closed by the car")
            conformance?.ended(link, .closedByCar, now: clock.now())
        }
    }
}
