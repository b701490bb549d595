// A signed audit checkpoint (docs/cloud.md, "Audit chain and checkpoints"): the car states,
// under its identity key, "my chain reached sequence N with head hash H at time T", and lists
// the links of chained events it pruned before they could be published.
import Protocol

/// Chained events `from...to` that the store no longer held when the checkpoint was written
/// (pruned, most often before they were published). `lastHash` is the hash of `to`, so the
/// verifier checks that the event after the gap links to it instead of calling the gap a
/// deletion. The pruned events' own content is gone for good and cannot be checked.
public struct PrunedRange: Equatable, Sendable {
    public var from: Int64
    public var to: Int64
    public var lastHash: Bytes

    public init(from: Int64, to: Int64, lastHash: Bytes) {
        self.from = from
        self.to = to
        self.lastHash = lastHash
    }
}

public struct AuditCheckpoint: Equatable, Sendable {
    /// Domain label (docs/protocol.md 18.11 style): the identity key signs nothing else that
    /// starts with these bytes, and the signed input is always longer than 36 bytes.
    public static let label = "OCK1-AUDIT-CHECKPOINT"
    /// Ranges one checkpoint carries at most, so a checkpoint stays one small MQTT message.
    public static let maximumPrunedRanges = 64

    public var vehicle: String
    public var seq: Int64
    public var headHash: Bytes
    public var time: Int64
    public var timeTrusted: Bool
    public var pruned: [PrunedRange]
    /// ECDSA P-256 SHA-256, raw r || s (64 bytes), over `signedBytes`.
    public var signature: Bytes

    public init(vehicle: String, seq: Int64, headHash: Bytes, time: Int64, timeTrusted: Bool,
                pruned: [PrunedRange] = [], signature: Bytes = []) {
        self.vehicle = vehicle
        self.seq = seq
        self.headHash = headHash
        self.time = time
        self.timeTrusted = timeTrusted
        self.pruned = pruned
        self.signature = signature
    }

    /// label || str vehicle || u64 seq || headHash(32) || i64 time || u8 trusted || u32 count
    /// || count × (u64 from || u64 to || lastHash(32)).
    public var signedBytes: Bytes {
        var out = AuditEncoding(label: Self.label)
        out.string(vehicle)
        out.u64(UInt64(bitPattern: seq))
        out.append(headHash)
        out.i64(time)
        out.u8(timeTrusted ? 1 : 0)
        out.u32(UInt32(truncatingIfNeeded: pruned.count))
        for range in pruned {
            out.u64(UInt64(bitPattern: range.from))
            out.u64(UInt64(bitPattern: range.to))
            out.append(range.lastHash)
        }
        return out.bytes
    }

    public func signed(with key: any ProtocolSigner) throws -> AuditCheckpoint {
        var copy = self
        copy.signature = try key.signature(for: signedBytes).rawRepresentation
        return copy
    }

    /// True when `signature` is the car's over these exact fields (and the hashes are 32 bytes,
    /// so no field can be stretched into another).
    public func isValid(carKey: P256PublicKey) -> Bool {
        guard headHash.count == SHA256.byteCount, signature.count == 64,
              pruned.allSatisfy({ $0.lastHash.count == SHA256.byteCount }) else {
            return false
        }
        return (try? carKey.verify(signature: signature, encoding: .raw, message: signedBytes)) != nil
    }

    /// The JSON published on vehicles/{id}/audit (hashes and signature in lower-case hex).
    public var json: String {
        JSONValue.object([
            ("type", .string("checkpoint")),
            ("vehicle", .string(vehicle)),
            ("seq", .integer(seq)),
            ("headHash", .string(headHash.hexString)),
            ("time", .integer(time)),
            ("timeTrusted", .bool(timeTrusted)),
            ("pruned", .array(pruned.map { range in
                .object([("from", .integer(range.from)), ("to", .integer(range.to)), ("lastHash", .string(range.lastHash.hexString))])
            })),
            ("signature", .string(signature.hexString)),
        ]).serialized
    }

    /// Parses the published JSON; nil when it is not a checkpoint (fields missing or mistyped).
    public init?(json: Bytes) {
        guard let root = try? AuditJSON.parse(json), let object = root.object,
              object["type"]?.string == "checkpoint",
              let vehicle = object["vehicle"]?.string, let seq = object["seq"]?.integer,
              let head = object["headHash"]?.string.flatMap({ Bytes(hex: $0) }),
              let time = object["time"]?.integer, let trusted = object["timeTrusted"]?.bool,
              let signature = object["signature"]?.string.flatMap({ Bytes(hex: $0) }),
              let rangeNodes = object["pruned"]?.array else { return nil }
        var ranges = [PrunedRange]()
        for node in rangeNodes {
            guard let range = node.object, let from = range["from"]?.integer, let to = range["to"]?.integer,
                  let last = range["lastHash"]?.string.flatMap({ Bytes(hex: $0) }) else { return nil }
            ranges.append(PrunedRange(from: from, to: to, lastHash: last))
        }
        self.init(vehicle: vehicle, seq: seq, headHash: head, time: time, timeTrusted: trusted, pruned: ranges, signature: signature)
    }
}
