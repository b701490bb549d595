// MQTT inbound: envelopes through the real InboundGate (one store in a private temp directory,
// opened once per process), then the signed body through its strict decoder.
#if canImport(Glibc)
import Glibc
#endif
import Drivers
import Protocol

enum MQTTTargets {
    nonisolated(unsafe) static var gate: InboundGate?
    static let topics = CloudTopics(vehicleID: "FUZZ-VEHICLE-1")

    static func sharedGate() -> InboundGate? {
        if let gate { return gate }
        var template = Array("/tmp/carkey-fuzz-store-XXXXXX".utf8CString)
        guard template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) != nil else { return nil }
        let path = String(cString: template)
        guard let store = try? CarStore.open(stateDirectory: path) else { return nil }
        gate = InboundGate(topics: topics, store: store)
        return gate
    }

    static let all: [FuzzTarget] = [
        FuzzTarget("mqtt-inbound", "InboundGate.admit on each inbound topic (byte 0 picks it): accepted => payload <= 8 KiB, ID a lowercase UUID, body = hex of the envelope; the same ID again is a duplicate; the body's signed document (remote command, config, revocation list) decodes canonically") { input throws(PropertyViolation) in
            guard let selector = input.first, let gate = sharedGate() else { return false }
            let topic = topics.inbound[Int(selector) % topics.inbound.count]
            let payload = Array(input.dropFirst())
            let message = MQTTInbound(topic: topic, payload: payload)
            guard case .success(let envelope) = gate.admit(message) else { return false }
            try require(payload.count <= InboundGate.maximumPayloadBytes, "payload within 8 KiB")
            try require(InboundGate.isUUID(envelope.id) && envelope.id == envelope.id.lowercased(), "ID is a lowercase UUID")
            try require(!envelope.type.isEmpty, "type non-empty")
            if case .success = gate.admit(message) { try require(false, "same ID admitted twice") }
            gate.forget(envelope.id)
            let body = envelope.body
            _ = try Strict.roundTrip(body, maxLength: RemoteCommand.maxLength, decode: RemoteCommand.decode, encode: { $0.encoded() })
            _ = try Strict.roundTrip(body, maxLength: SignedConfig.maxLength, decode: SignedConfig.decode, encode: { $0.encoded() })
            _ = try Strict.roundTrip(body, maxLength: RevocationList.maxLength, decode: RevocationList.decode, encode: { $0.encoded() })
            return true
        },
    ]
}
