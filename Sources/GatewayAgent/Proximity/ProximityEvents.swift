// Event-log rows for the decisions distance takes part in: a phone's unlock or trunk allowed or
// refused by proximity, passive entry, walk-away lock. Each carries its evidence (zone,
// filtered and raw distance in centimetres, STS quality, valid rounds in a row, rounds, age,
// plausibility, RSSI), so an owner or investigator can see why a door opened or did not.
// Never secrets: the key ID is a public handle.
import Drivers
import Protocol

final class ProximityEvents {
    static let kind = EventKind.proximity

    private let store: CarStore
    private let clock: AgentClock
    private let log: AgentLog
    /// Commits the round's pending audit rows first, so sequence numbers keep the order.
    var beforeWrite: (() -> Void)?

    init(store: CarStore, clock: AgentClock, log: AgentLog) {
        self.store = store
        self.clock = clock
        self.log = log
    }

    /// `action`: "unlock", "trunk", "passiveEntry", "walkAwayLock"; `result`: "allowed",
    /// "refused", "locked". False when the event could not be written: a decision the car
    /// takes by itself (passive entry) must then not move anything.
    @discardableResult
    func record(action: EventAction, result: String, key: KeyID?, refusal: NotInProximityReason?,
                evidence: [ProximityEvidence], extra: [(String, JSONValue)] = []) -> Bool {
        var fields: [(String, JSONValue)] = []
        if let refusal { fields.append(("reason", .string(refusal.rawValue))) }
        fields += extra
        if evidence.count == 1, let only = evidence.first {
            fields += Self.fields(only)
        } else if !evidence.isEmpty {
            fields.append(("keys", .array(evidence.map { .object([("key", .string($0.key.bytes.hexString))] + Self.fields($0)) })))
        }
        let fault = refusal.map { _ in EventFault(code: Int64(FaultCode.notInProximity.rawValue), name: FaultCode.notInProximity.name) }
        let event = NewEvent(kind: Self.kind, time: clock.eventTime(), actor: key?.bytes.hexString, action: action,
                             result: result, fault: fault, detailJSON: JSONValue.object(fields).serialized)
        beforeWrite?()
        do {
            try store.appendEvent(event)
            return true
        } catch {
            log.error("events: could not append proximity \(action): \(error)")
            return false
        }
    }

    /// The evidence as event fields; distances in whole centimetres (exact integers in JSON).
    static func fields(_ evidence: ProximityEvidence) -> [(String, JSONValue)] {
        var fields: [(String, JSONValue)] = [("zone", .string(evidence.filteredZone.description))]
        if let metres = evidence.filteredDistanceMetres { fields.append(("distanceCm", .integer(centimetres(metres)))) }
        if let metres = evidence.lastRawDistanceMetres { fields.append(("rawDistanceCm", .integer(centimetres(metres)))) }
        if let quality = evidence.stsQuality { fields.append(("stsQualityPercent", .integer(Int64((quality * 100).rounded())))) }
        fields.append(("validRounds", .integer(Int64(evidence.consecutiveValidRounds))))
        fields.append(("rounds", .integer(Int64(clamping: evidence.roundsTotal))))
        if let age = evidence.ageMillis { fields.append(("ageMs", .integer(Int64(clamping: age)))) }
        fields.append(("plausible", .bool(evidence.plausible)))
        if let rssi = evidence.rssiDBm, rssi.isFinite { fields.append(("rssiDbm", .integer(Int64(rssi.rounded())))) }
        return fields
    }

    static func centimetres(_ metres: Double) -> Int64 {
        guard metres.isFinite else { return 0 }
        return Int64((metres * 100).rounded())
    }
}
