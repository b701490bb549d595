// One event as a verifier reads it back from the JSON published on vehicles/{id}/events: the
// canonical fields (detail as its exact published text) and the chain fields the car attached.
import Protocol

public struct AuditEventLine: Sendable {
    public let fields: EventCanonical.Fields
    /// nil for events published before the chain existed (no prevHash/hash members).
    public let chain: EventChainLink?

    /// Recomputes the hash from the published fields and the published prevHash.
    public var recomputedHash: Bytes? { chain.map { EventCanonical.hash(fields, prevHash: $0.prevHash) } }

    /// Parses an event payload; nil when the JSON is not an event (missing or mistyped members).
    public init?(json: Bytes) {
        guard let root = try? AuditJSON.parse(json), let object = root.object else { return nil }
        self.init(object: object)
    }

    init?(object: AuditJSONObject) {
        guard let uuid = object["id"]?.string, let seq = object["seq"]?.integer, let time = object["time"]?.integer,
              let trusted = object["timeTrusted"]?.bool, let kind = object["kind"]?.string,
              let action = object["action"]?.string, let result = object["result"]?.string,
              let actorNode = object["actor"], let faultNode = object["fault"], let detail = object["detail"] else { return nil }
        guard actorNode.isNull || actorNode.string != nil else { return nil }
        var faultCode: Int64?
        var faultName: String?
        if let fault = faultNode.object {
            guard let name = fault["name"]?.string, let code = fault["code"], code.isNull || code.integer != nil else { return nil }
            faultName = name
            faultCode = code.integer
        } else if !faultNode.isNull {
            return nil
        }
        fields = EventCanonical.Fields(seq: seq, uuid: uuid, time: time, timeTrusted: trusted, kind: kind, actor: actorNode.string,
                                       action: action, result: result, faultCode: faultCode, faultName: faultName,
                                       // The writer inserts the stored detail text verbatim after
                                       // "detail":, so the raw span is exactly what was hashed.
                                       detail: detail.raw)
        if let prev = object["prevHash"]?.string.flatMap({ Bytes(hex: $0) }),
           let hash = object["hash"]?.string.flatMap({ Bytes(hex: $0) }) {
            chain = EventChainLink(prevHash: prev, hash: hash)
        } else {
            chain = nil
        }
    }

}
