// Fleet key grants from vehicles/{id}/cmd (type "fleetKey"): verified (FleetKeyGrantValidator),
// then the new key (and, for a rotation, the retired old one) sealed in the store together
// with the event and the answer, in one transaction; only then does the key sign.
import Drivers
import Protocol

final class FleetKeyService {
    private let cloud: AgentCloud
    private let signers: RemoteSigners
    private let vehicleID: VehicleID
    private let clock: AgentClock
    private let log: AgentLog

    init(cloud: AgentCloud, signers: RemoteSigners, vehicleID: VehicleID, clock: AgentClock, log: AgentLog) {
        self.cloud = cloud
        self.signers = signers
        self.vehicleID = vehicleID
        self.clock = clock
        self.log = log
    }

    func handle(_ envelope: InboundEnvelope) {
        let verified: VerifiedFleetKeyGrant
        do throws(FaultCode) {
            verified = try FleetKeyGrantValidator.verify(envelope.body, vehicleID: vehicleID, signers: signers, isRevoked: signers.isRevoked)
        } catch {
            answer(envelope, fault: error, detail: [("event", .string("fleetKeyRefused"))], changes: [])
            return
        }
        let grant = verified.grant
        guard verified.rotation || signers.fleetKeyCount < FleetKeyStore.capacity || signers.fleetKey(grant.fleetKeyID) != nil else {
            answer(envelope, fault: .keychainFull, detail: [("event", .string("fleetKeyRefused"))], changes: [])
            return
        }
        var changes = [StoredFleetKey(key: grant.fleetKey, status: .active)]
        let retiring = verified.rotation ? grant.issuerKeyID : nil
        if let retiring, let old = signers.fleetKey(retiring) { changes.append(StoredFleetKey(key: old, status: .retired)) }
        let detail: [(String, JSONValue)] = [("event", .string(verified.rotation ? "fleetKeyRotated" : "fleetKeyEnrolled")),
                                             ("key", .string(grant.fleetKeyID.description)),
                                             ("issuer", .string(grant.issuerKeyID.description))]
        if answer(envelope, fault: nil, detail: detail, changes: changes) {
            signers.installed(grant.fleetKey, retiring: retiring)
            log.info("remote: fleet key \(grant.fleetKeyID) " + (retiring.map { "replaces fleet key \($0)" } ?? "enrolled by owner key \(grant.issuerKeyID)"))
        }
    }

    /// Event, rows and result in one transaction; true when it committed.
    @discardableResult
    private func answer(_ envelope: InboundEnvelope, fault: FaultCode?, detail: [(String, JSONValue)], changes: [StoredFleetKey]) -> Bool {
        if let fault { log.info("remote: fleet key grant \(envelope.id) refused: \(fault.name)") }
        let row = NewEvent(kind: .enrollment, time: clock.eventTime(), action: .fleetKey, result: fault == nil ? "ok" : "refused",
                           fault: fault.map { EventFault(code: Int64($0.rawValue), name: $0.name) },
                           detailJSON: JSONValue.object(detail).serialized)
        var committed = false
        cloud.publishResult(requestID: envelope.id, type: envelope.type, result: fault == nil ? "ok" : "refused", fault: fault,
                            also: { transaction in
                                for change in changes { try FleetKeyStore.put(change, in: transaction) }
                                try transaction.appendEvent(row)
                                committed = true
                            })
        return committed
    }
}
