// What the car does with a signed remote command from vehicles/{id}/cmd, on the agent's thread:
// verify (RemoteCommandVerifier), refuse duplicates (RemoteCommandLedger), apply the owner's
// policy (RemoteSettings, service mode), then actuate through the same GPIOActuator and
// interlock as a phone's command. Every decision is an event row and one result on
// vehicles/{id}/results; the UUID is recorded in the transaction of the decision, and for an
// actuation before the line moves, so a crash can lose a pulse but never repeat one.
import Drivers
import Protocol

final class RemoteCommandService: LoopSource {
    /// While auto-relock is armed, how often the door inputs are looked at.
    static let relockPollMillis: UInt64 = 200

    private let cloud: AgentCloud
    private let store: CarStore
    private let actuator: GPIOActuator
    let signers: RemoteSigners
    /// The config's "remote" object; a new configuration from the cloud replaces it live.
    var settings: RemoteSettings
    private let vehicleID: VehicleID
    private let clock: AgentClock
    private let log: AgentLog
    /// True while the console's service mode is on (nil: no console, never on).
    var serviceModeActive: (() -> Bool)?
    /// Told the state after each remote actuation (the cloud's state report).
    var stateObserver: ((VehicleState) -> Void)?
    /// Commands whose pulse is running, by UUID: the envelope to answer and who signed.
    private var pending: [String: (envelope: InboundEnvelope, verified: VerifiedRemoteCommand)] = [:]
    /// Auto-relock after a remote unlock: the unlock's UUID and when to lock.
    private var relock: (commandID: String, key: KeyID, atMillis: UInt64)?

    init(cloud: AgentCloud, store: CarStore, actuator: GPIOActuator, signers: RemoteSigners, settings: RemoteSettings,
         vehicleID: VehicleID, clock: AgentClock, log: AgentLog) {
        self.cloud = cloud
        self.store = store
        self.actuator = actuator
        self.signers = signers
        self.settings = settings
        self.vehicleID = vehicleID
        self.clock = clock
        self.log = log
    }

    // MARK: Decision

    func handle(_ envelope: InboundEnvelope) {
        let now = clock.now()
        let time = RemoteCheckTime(seconds: now.wallSeconds, trusted: now.wallClockTrusted, mark: clock.trustedMark)
        let verified: VerifiedRemoteCommand
        do throws(FaultCode) {
            verified = try RemoteCommandVerifier.verify(envelope.body, vehicleID: vehicleID, signers: signers,
                                                        isRevoked: signers.isRevoked, time: time)
        } catch {
            // Not authentic (or not for now): its UUID is not trusted either, so it is not recorded.
            let claimed = try? RemoteCommand.decode(envelope.body)
            answer(envelope, claimed, signer: nil, fault: error, record: false)
            return
        }
        let command = verified.command
        let seen = (try? store.read { try RemoteCommandLedger.contains(command.commandID, in: $0) }) ?? true
        if seen { return answer(envelope, command, signer: verified.signer, fault: .replayedCounter, record: false) }
        if settings.refuseDuringServiceMode, serviceModeActive?() == true {
            return answer(envelope, command, signer: verified.signer, fault: .busy, record: true, why: "service mode is on")
        }
        if command.action == .unlock, !settings.allowUnlock {
            return answer(envelope, command, signer: verified.signer, fault: .insufficientPermission, record: true,
                          why: "remote unlock is off (remote.allowUnlock)")
        }
        guard let actuation = Self.actuation(command.action) else {
            // status and report: the answer carries the state; nothing moves.
            if command.action == .report { stateObserver?(actuator.state) }
            return answer(envelope, command, signer: verified.signer, fault: nil, record: true)
        }
        // The UUID and the accepted decision are committed before the line moves.
        do {
            try store.write { transaction in
                try Self.recordFresh(command, time: time, in: transaction)
                try transaction.appendEvent(event(command, signer: verified.signer, result: "allowed", fault: nil, detail: "remoteCommandAccepted"))
            }
        } catch let fault as FaultCode {
            return answer(envelope, command, signer: verified.signer, fault: fault, record: false)
        } catch {
            log.info("remote: command \(command.uuidString) not recorded, so not performed: \(error)")
            return answer(envelope, command, signer: verified.signer, fault: .internalError, record: false)
        }
        if relock != nil, actuation == .lock || actuation == .unlock { relock = nil }  // a newer order wins
        if let refused = actuator.startRemote(actuation, commandID: command.uuidString, key: command.signerKeyID) {
            log.info("remote: \(command.action) \(command.uuidString) by \(verified.signer.kind.rawValue) key \(command.signerKeyID): \(refused.summary)")
            return answer(envelope, command, signer: verified.signer, fault: refused.fault ?? .actuationFailed, record: false)
        }
        log.info("remote: \(command.action) \(command.uuidString) by \(verified.signer.kind.rawValue) key \(command.signerKeyID) accepted")
        pending[command.uuidString] = (envelope, verified)
    }

    /// A remote pulse ended (ActuationCompletions.onRemote).
    func finished(_ actuation: Actuation, commandID: String, outcome: CommandOutcome) {
        stateObserver?(outcome.state)
        if commandID.hasPrefix(Self.relockPrefix) {
            log.info("remote: auto-relock after \(commandID.dropFirst(Self.relockPrefix.count)): \(outcome.summary), result \(outcome.fault?.name ?? "ok")")
            _ = try? store.appendEvent(NewEvent(kind: .accessDecision, time: clock.eventTime(), action: .remote(.lock),
                                                result: outcome.fault == nil ? "ok" : "failed",
                                                fault: outcome.fault.map { EventFault(code: Int64($0.rawValue), name: $0.name) },
                                                detailJSON: JSONValue.object([("event", .string("remoteAutoRelock")),
                                                                              ("command", .string(String(commandID.dropFirst(Self.relockPrefix.count))))]).serialized))
            return
        }
        guard let (envelope, verified) = pending.removeValue(forKey: commandID) else { return }
        let command = verified.command
        log.info("remote: \(command.action) \(commandID): \(outcome.summary), result \(outcome.fault?.name ?? "ok"), state \(outcome.state)")
        let completed = event(command, signer: verified.signer, result: outcome.fault == nil ? "ok" : "failed", fault: outcome.fault,
                              detail: "remoteCommandCompleted")
        cloud.publishResult(requestID: envelope.id, type: envelope.type, result: outcome.fault == nil ? "ok" : "refused",
                            fault: outcome.fault, extra: resultFields(command, state: outcome.state),
                            also: { try $0.appendEvent(completed) })
        if actuation == .unlock, outcome.fault == nil, settings.autoRelockSeconds > 0 {
            relock = (commandID, command.signerKeyID, clock.monotonicMillis + UInt64(settings.autoRelockSeconds) * 1000)
            log.info("remote: auto-relock in \(settings.autoRelockSeconds) s unless a door opens")
        }
    }

    // MARK: Auto-relock (LoopSource)

    static let relockPrefix = "relock:"

    func pollSet() -> [(FileDescriptor, PollEvents)] { [] }

    func nextDeadline() -> UInt64? {
        guard let relock else { return nil }
        return min(relock.atMillis, clock.monotonicMillis + Self.relockPollMillis)
    }

    func process(_ ready: [PollEvents], nowMillis: UInt64) {
        guard let armed = relock else { return }
        let state = actuator.state
        if state.contains(.anyDoorOpen) || state.contains(.driverDoorOpen) {
            relock = nil
            log.info("remote: a door opened after \(armed.commandID): auto-relock cancelled")
            return
        }
        guard nowMillis >= armed.atMillis else { return }
        relock = nil
        if let refused = actuator.startRemote(.lock, commandID: Self.relockPrefix + armed.commandID, key: armed.key) {
            log.info("remote: auto-relock after \(armed.commandID) not started: \(refused.summary)")
        }
    }

    // MARK: Helpers

    private static func actuation(_ action: RemoteAction) -> Actuation? {
        switch action {
        case .lock: return .lock
        case .unlock: return .unlock
        case .trunk: return .trunkRelease
        case .status, .report: return nil
        }
    }

    /// Prunes expired UUIDs and records this one; `replayedCounter` if it is there already,
    /// `busy` if the table is full of live UUIDs.
    private static func recordFresh(_ command: RemoteCommand, time: RemoteCheckTime, in transaction: StoreTransaction) throws {
        let remaining = try RemoteCommandLedger.prune(before: time.trusted ? time.seconds : (time.mark ?? 0), in: transaction)
        guard remaining < RemoteCommandLedger.capacity else { throw FaultCode.busy }
        guard try RemoteCommandLedger.record(command, in: transaction) else { throw FaultCode.replayedCounter }
    }

    /// One event row and one result, in one transaction with (if `record`) the UUID.
    private func answer(_ envelope: InboundEnvelope, _ command: RemoteCommand?, signer: RemoteSigner?, fault: FaultCode?,
                        record: Bool, why: String? = nil) {
        let name = command.map { "\($0.action)" } ?? "command"
        log.info("remote: \(name) \(command?.uuidString ?? envelope.id) \(fault.map { "refused: \($0.name)" } ?? "answered")"
                 + (why.map { " (\($0))" } ?? ""))
        let row = command.map { event($0, signer: signer, result: fault == nil ? "ok" : "refused", fault: fault,
                                      detail: fault == nil ? "remoteCommandAnswered" : "remoteCommandRefused") }
            ?? NewEvent(kind: .accessDecision, time: clock.eventTime(), action: .remoteCommand, result: "refused",
                        fault: fault.map { EventFault(code: Int64($0.rawValue), name: $0.name) },
                        detailJSON: JSONValue.object([("event", .string("remoteCommandRefused")), ("request", .string(envelope.id))]).serialized)
        let time = RemoteCheckTime(seconds: clock.now().wallSeconds, trusted: clock.isTrusted, mark: clock.trustedMark)
        cloud.publishResult(requestID: envelope.id, type: envelope.type, result: fault == nil ? "ok" : "refused", fault: fault,
                            extra: command.map { resultFields($0, state: actuator.state) } ?? [],
                            also: { transaction in
                                if record, let command { try Self.recordFresh(command, time: time, in: transaction) }
                                try transaction.appendEvent(row)
                            })
    }

    private func resultFields(_ command: RemoteCommand, state: VehicleState) -> [(String, JSONValue)] {
        [("command", .string(command.uuidString)), ("action", .string(command.action.description)),
         ("state", .string(state.description))]
    }

    private func event(_ command: RemoteCommand, signer: RemoteSigner?, result: String, fault: FaultCode?, detail: String) -> NewEvent {
        var fields: [(String, JSONValue)] = [("event", .string(detail)), ("command", .string(command.uuidString)), ("source", .string("cloud"))]
        if let signer { fields.append(("signer", .string(signer.kind.rawValue))) }
        return NewEvent(kind: .accessDecision, time: clock.eventTime(), actor: command.signerKeyID.bytes.hexString,
                        action: .remote(command.action), result: result,
                        fault: fault.map { EventFault(code: Int64($0.rawValue), name: $0.name) },
                        detailJSON: JSONValue.object(fields).serialized)
    }
}
