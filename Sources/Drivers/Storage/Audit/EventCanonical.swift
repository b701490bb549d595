// The canonical encoding of one event for the audit chain (docs/cloud.md, "Audit chain and
// checkpoints"). Fixed field order, every string length-prefixed, absent values tagged, so the
// hash never depends on how a JSON writer spaced or escaped anything.
import Protocol

public enum EventCanonical {
    /// Domain label in the style of docs/protocol.md 18.11: these bytes are hashed, never signed.
    public static let label = "OCK1-AUDIT-EVENT"

    /// The fields that are hashed, as the car stores them and as a verifier reads them back
    /// from the published JSON.
    public struct Fields: Equatable, Sendable {
        public var seq: Int64
        public var uuid: String
        public var time: Int64
        public var timeTrusted: Bool
        public var kind: String
        public var actor: String?
        public var action: String
        public var result: String
        public var faultCode: Int64?
        public var faultName: String?
        /// The detail's JSON text exactly as stored and published; nil is hashed as "null".
        public var detail: String?

        public init(seq: Int64, uuid: String, time: Int64, timeTrusted: Bool, kind: String, actor: String?,
                    action: String, result: String, faultCode: Int64?, faultName: String?, detail: String?) {
            self.seq = seq
            self.uuid = uuid
            self.time = time
            self.timeTrusted = timeTrusted
            self.kind = kind
            self.actor = actor
            self.action = action
            self.result = result
            self.faultCode = faultCode
            self.faultName = faultName
            self.detail = detail
        }

        public init(seq: Int64, uuid: String, event: NewEvent) {
            self.init(seq: seq, uuid: uuid, time: event.time.seconds, timeTrusted: event.time.trusted,
                      kind: event.kind.rawValue, actor: event.actor, action: event.action, result: event.result,
                      faultCode: event.fault?.code, faultName: event.fault?.name, detail: event.detailJSON)
        }
    }

    /// label || prevHash(32) || u64 seq || str uuid || i64 time || u8 trusted || str kind
    /// || opt actor || str action || str result || u8 fault? [opt-int code || str name]
    /// || str detail ("null" when absent).
    public static func encode(_ fields: Fields, prevHash: Bytes) -> Bytes {
        var out = AuditEncoding(label: label)
        out.append(prevHash)
        out.u64(UInt64(bitPattern: fields.seq))
        out.string(fields.uuid)
        out.i64(fields.time)
        out.u8(fields.timeTrusted ? 1 : 0)
        out.string(fields.kind)
        out.optionalString(fields.actor)
        out.string(fields.action)
        out.string(fields.result)
        if let name = fields.faultName {
            out.u8(1)
            out.optionalInteger(fields.faultCode)
            out.string(name)
        } else {
            out.u8(0)
        }
        // "null" and an absent detail publish the same JSON, so they must hash the same.
        out.string(fields.detail ?? "null")
        return out.bytes
    }

    public static func hash(_ fields: Fields, prevHash: Bytes) -> Bytes {
        SHA256.hash(encode(fields, prevHash: prevHash))
    }

    /// The link the car stores for a new event appended after `prevHash`.
    static func link(seq: Int64, uuid: String, event: NewEvent, prevHash: Bytes) -> EventChainLink {
        EventChainLink(prevHash: prevHash, hash: hash(Fields(seq: seq, uuid: uuid, event: event), prevHash: prevHash))
    }
}
