// The retained revocation list from vehicles/{id}/revocations: verified (owner signature,
// vehicle), then its version against the one the car last applied (persisted, only moves
// forward), then each revocation applied in order exactly as one from the commands topic
// (KeyService.applyRevocation: verified again, stored, sessions ended). The new version is
// written only after every entry applied, so a crash in between re-applies the list on the
// broker's redelivery (applying a revocation twice changes nothing).
import Drivers
import Protocol

final class RevocationListService {
    static let stateKind = RecordKind(rawValue: "remote-state")!
    static let versionID: Bytes = Array("revocation-list".utf8)

    private let cloud: AgentCloud
    private let service: CarService
    private let keys: KeyService
    private let store: CarStore
    private let vehicleID: VehicleID
    private let clock: AgentClock
    private let log: AgentLog

    init(cloud: AgentCloud, service: CarService, keys: KeyService, store: CarStore, vehicleID: VehicleID, clock: AgentClock, log: AgentLog) {
        self.clock = clock
        self.cloud = cloud
        self.service = service
        self.keys = keys
        self.store = store
        self.vehicleID = vehicleID
        self.log = log
    }

    /// The version last applied (0: none).
    func appliedVersion() throws -> UInt32 {
        guard let bytes = try store.get(kind: Self.stateKind, id: Self.versionID), bytes.count == 4 else { return 0 }
        return bytes.reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
    }

    func handle(_ envelope: InboundEnvelope) {
        let (fault, detail) = apply(envelope.body)
        log.info("remote: revocation list \(detail): \(fault?.name ?? "applied")")
        let row = NewEvent(kind: .revocation, time: cloudTime(), action: .revocationList, result: fault == nil ? "ok" : "refused",
                           fault: fault.map { EventFault(code: Int64($0.rawValue), name: $0.name) },
                           detailJSON: JSONValue.object([("event", .string("revocationList")), ("detail", .string(detail))]).serialized)
        cloud.publishResult(requestID: envelope.id, type: envelope.type, result: fault == nil ? "ok" : "refused", fault: fault,
                            also: { try $0.appendEvent(row) })
    }

    private func cloudTime() -> EventTime { clock.eventTime() }

    private func apply(_ bytes: Bytes) -> (FaultCode?, String) {
        let verified: VerifiedRevocationList
        do throws(FaultCode) {
            verified = try RevocationListValidator.verify(bytes, vehicleID: vehicleID, keys: keys.directory)
        } catch {
            return (error, "not verified")
        }
        let list = verified.list
        let current: UInt32
        do { current = try appliedVersion() } catch { return (.internalError, "version \(list.listVersion): stored version unreadable") }
        if list.listVersion < current { return (.outOfOrderCounter, "version \(list.listVersion) older than applied \(current)") }
        if list.listVersion == current { return (nil, "version \(list.listVersion) already applied") }
        for (index, entry) in list.entries.enumerated() {
            let fault: FaultCode? = service.withEngine { engine, now in
                let outcome = keys.applyRevocation(entry, source: "cloud-list", engine: &engine, now: now)
                return (outcome.fault, outcome.actions)
            }
            if let fault { return (fault, "version \(list.listVersion): entry \(index + 1) of \(list.entries.count) refused") }
        }
        var payload: Bytes = []
        payload.appendBE32(list.listVersion)
        do {
            try store.put(payload, kind: Self.stateKind, id: Self.versionID)
        } catch {
            return (.internalError, "version \(list.listVersion) applied but not recorded")
        }
        return (nil, "version \(list.listVersion) (\(list.entries.count) revocation(s), previous \(current))")
    }
}

extension Array where Element == UInt8 {
    fileprivate mutating func appendBE32(_ value: UInt32) {
        append(contentsOf: [UInt8(value >> 24), UInt8(value >> 16 & 0xff), UInt8(value >> 8 & 0xff), UInt8(value & 0xff)])
    }
}
