// The gate every inbound MQTT message passes: known topic, bounded size, well-formed envelope,
// not seen before. A rejected message is counted and changes nothing. The broker hands a
// retained message (the desired configuration, the revocation list) to the car again at every
// subscribe: a repeat of one already handled is expected, counted apart and not a rejection.
import Protocol

/// An accepted inbound message: {"id": UUID, "type": "...", "body": HEX}.
public struct InboundEnvelope: Sendable, Equatable {
    public let topic: String
    public let id: String
    public let type: String
    /// The signed object or document the type names, decoded from hex; checked by its handler.
    public let body: Bytes
}

public enum InboundRejection: String, Error, Sendable, CaseIterable {
    case unknownTopic, oversized, malformed, duplicate
    /// The envelope has a member besides id, type and body (docs/cloud.md: exactly this shape);
    /// `InboundGate.lastDetail` names it.
    case unknownField
    /// A retained message (config/desired, revocations) the car already received, handed again
    /// at a (re)subscribe. Not a rejection: counted in `InboundCounters.retainedRepeats`.
    case retainedRepeat
}

/// Counts per outcome, for the console and the state report.
public struct InboundCounters: Sendable, Equatable {
    public var accepted = 0
    public var rejected: [InboundRejection: Int] = [:]
    /// Repeats of retained messages already received (`InboundRejection.retainedRepeat`).
    public var retainedRepeats = 0
    public init() {}
}

public final class InboundGate {
    public static let maximumPayloadBytes = 8 * 1024
    /// Which envelope types each topic accepts.
    private let allowed: [String: Set<String>]
    /// Topics whose messages are retained on the broker, so they come again at every subscribe.
    private let retainedTopics: Set<String>
    private let store: CarStore
    public private(set) var counters = InboundCounters()
    /// IDs admitted in this run, newest `admittedWindow` (the handler persists handled ones),
    /// each with the number of its admission: an ID forgotten and admitted again has a newer
    /// entry, and the window's eviction of the old entry must not drop the new one.
    private var admitted: [String: UInt64] = [:]
    private var admittedOrder: [(id: String, admission: UInt64)] = []
    private var admissions: UInt64 = 0
    public static let admittedWindow = 4096

    public init(topics: CloudTopics, store: CarStore) {
        allowed = [topics.commands: ["command", "revocation", "share", "resendEvents"], topics.config: ["config"],
                   // Signed remote commands (and fleet-key objects an owner sends the same way),
                   // the retained revocation list, and the retained desired configuration.
                   topics.remoteCommands: ["command", "fleetKey"],
                   topics.revocationList: ["revocationList"],
                   topics.configDesired: ["config"]]
        retainedTopics = [topics.configDesired, topics.revocationList]
        self.store = store
    }

    /// Why the last message was rejected, beyond its reason (the unknown field's name), for
    /// the log line. Never payload content other than a member name, cut to 32 characters.
    public private(set) var lastDetail: String?

    static let envelopeMembers: Set<String> = ["id", "type", "body"]

    /// The envelope's three string members and nothing else: a member the car does not know
    /// could be read differently by another consumer of the same message, so it is refused.
    /// Duplicate members are refused by the parser itself.
    private enum Envelope {
        case valid(id: String, type: String, body: String)
        case unknownField(String)
        case malformed

        init(_ payload: Bytes) {
            guard case .object(let fields)? = try? JSONTree.parse(payload) else { self = .malformed; return }
            if let extra = fields.keys.filter({ !InboundGate.envelopeMembers.contains($0) }).sorted().first {
                self = .unknownField(String(extra.prefix(32)))
                return
            }
            guard let id = fields["id"]?.stringValue, let type = fields["type"]?.stringValue,
                  let body = fields["body"]?.stringValue else { self = .malformed; return }
            self = .valid(id: id, type: type, body: body)
        }
    }

    public func admit(_ message: MQTTInbound) -> Result<InboundEnvelope, InboundRejection> {
        lastDetail = nil
        let outcome = check(message)
        switch outcome {
        case .success: counters.accepted += 1
        case .failure(.retainedRepeat): counters.retainedRepeats += 1
        case .failure(let reason): counters.rejected[reason, default: 0] += 1
        }
        return outcome
    }

    private func check(_ message: MQTTInbound) -> Result<InboundEnvelope, InboundRejection> {
        guard let types = allowed[message.topic] else { return .failure(.unknownTopic) }
        guard message.payload.count <= Self.maximumPayloadBytes else { return .failure(.oversized) }
        let (envelopeID, envelopeType, envelopeBody): (String, String, String)
        switch Envelope(message.payload) {
        case .valid(let id, let type, let body): (envelopeID, envelopeType, envelopeBody) = (id, type, body)
        case .unknownField(let name):
            lastDetail = "unknown field \"\(name)\""
            return .failure(.unknownField)
        case .malformed: return .failure(.malformed)
        }
        guard Self.isUUID(envelopeID), types.contains(envelopeType),
              let body = Bytes(hex: envelopeBody) else { return .failure(.malformed) }
        // The durable record is written by the handler, in the transaction that queues its
        // answer (`markInboundSeen`), never here: the effect happens later on the agent's
        // thread, and a stop or crash in between must leave the cloud's retry admissible.
        // Within this run, IDs already admitted are dropped here. Only well-formed messages
        // are recorded, so garbage cannot push real IDs out of either window.
        let id = envelopeID.lowercased()
        let repeated: InboundRejection = retainedTopics.contains(message.topic) ? .retainedRepeat : .duplicate
        guard admitted[id] == nil else { return .failure(repeated) }
        guard let seen = try? store.read({ try $0.inboundSeen(id) }) else { return .failure(.malformed) }
        guard !seen else { return .failure(repeated) }
        admissions += 1
        admitted[id] = admissions
        admittedOrder.append((id, admissions))
        if admittedOrder.count > Self.admittedWindow {
            let oldest = admittedOrder.removeFirst()
            if admitted[oldest.id] == oldest.admission { admitted[oldest.id] = nil }
        }
        return .success(InboundEnvelope(topic: message.topic, id: id, type: envelopeType, body: body))
    }

    /// Admits `message` and hands it to `deliver`, which returns a message it dropped unhandled
    /// (a full mailbox sheds the oldest of the lowest class, or this one): that message's ID is
    /// forgotten, so the cloud's retry is admitted instead of refused as a duplicate.
    public func admit(_ message: MQTTInbound, deliver: (InboundEnvelope) -> InboundEnvelope?) -> Result<InboundEnvelope, InboundRejection> {
        let outcome = admit(message)
        if case .success(let envelope) = outcome, let shed = deliver(envelope) { forget(shed.id) }
        return outcome
    }

    /// Makes an admitted ID admissible again: the message was dropped before it was handled
    /// (the agent's mailbox shed it under a flood), so the cloud's retry with the same ID
    /// (docs/cloud.md) must get through. Same thread as `admit` (the service thread).
    public func forget(_ id: String) {
        admitted[id.lowercased()] = nil
    }

    /// 8-4-4-4-12 hex digits.
    public static func isUUID(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard bytes.count == 36 else { return false }
        for (index, byte) in bytes.enumerated() {
            if [8, 13, 18, 23].contains(index) {
                if byte != UInt8(ascii: "-") { return false }
            } else if !(byte >= 48 && byte <= 57) && !(byte >= 97 && byte <= 102) && !(byte >= 65 && byte <= 70) {
                return false
            }
        }
        return true
    }
}
