// The gate every inbound MQTT message passes: known topic, bounded size, well-formed envelope,
// not seen before. A rejected message is counted and changes nothing.
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
}

/// Counts per outcome, for the console and the state report.
public struct InboundCounters: Sendable, Equatable {
    public var accepted = 0
    public var rejected: [InboundRejection: Int] = [:]
    public init() {}
}

public final class InboundGate {
    public static let maximumPayloadBytes = 8 * 1024
    /// Which envelope types each topic accepts.
    private let allowed: [String: Set<String>]
    private let store: CarStore
    public private(set) var counters = InboundCounters()
    /// IDs admitted in this run, newest `admittedWindow` (the handler persists handled ones).
    private var admitted: Set<String> = []
    private var admittedOrder: [String] = []
    static let admittedWindow = 4096

    public init(topics: CloudTopics, store: CarStore) {
        allowed = [topics.commands: ["command", "revocation", "share"], topics.config: ["config"],
                   // Signed remote commands (and fleet-key objects an owner sends the same way),
                   // the retained revocation list, and the retained desired configuration.
                   topics.remoteCommands: ["command", "fleetKey"],
                   topics.revocationList: ["revocationList"],
                   topics.configDesired: ["config"]]
        self.store = store
    }

    /// The envelope's three string members; others are ignored, as they always were.
    private struct Envelope {
        let id: String
        let type: String
        let body: String

        init?(_ payload: Bytes) {
            guard case .object(let fields)? = try? JSONTree.parse(payload),
                  let id = fields["id"]?.stringValue, let type = fields["type"]?.stringValue,
                  let body = fields["body"]?.stringValue else { return nil }
            (self.id, self.type, self.body) = (id, type, body)
        }
    }

    public func admit(_ message: MQTTInbound) -> Result<InboundEnvelope, InboundRejection> {
        let outcome = check(message)
        switch outcome {
        case .success: counters.accepted += 1
        case .failure(let reason): counters.rejected[reason, default: 0] += 1
        }
        return outcome
    }

    private func check(_ message: MQTTInbound) -> Result<InboundEnvelope, InboundRejection> {
        guard let types = allowed[message.topic] else { return .failure(.unknownTopic) }
        guard message.payload.count <= Self.maximumPayloadBytes else { return .failure(.oversized) }
        guard let envelope = Envelope(message.payload),
              Self.isUUID(envelope.id), types.contains(envelope.type),
              let body = Bytes(hex: envelope.body) else { return .failure(.malformed) }
        // The durable record is written by the handler, in the transaction that queues its
        // answer (`markInboundSeen`), never here: the effect happens later on the agent's
        // thread, and a stop or crash in between must leave the cloud's retry admissible.
        // Within this run, IDs already admitted are dropped here. Only well-formed messages
        // are recorded, so garbage cannot push real IDs out of either window.
        let id = envelope.id.lowercased()
        guard !admitted.contains(id) else { return .failure(.duplicate) }
        guard let seen = try? store.read({ try $0.inboundSeen(id) }) else { return .failure(.malformed) }
        guard !seen else { return .failure(.duplicate) }
        admitted.insert(id)
        admittedOrder.append(id)
        if admittedOrder.count > Self.admittedWindow { admitted.remove(admittedOrder.removeFirst()) }
        return .success(InboundEnvelope(topic: message.topic, id: id, type: envelope.type, body: body))
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
