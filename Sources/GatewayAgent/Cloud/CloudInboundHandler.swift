// What the car does with an admitted cloud message, on the agent's thread. Signed key objects
// are verified exactly like ones arriving over BLE (the MQTT channel authorises nothing);
// every outcome is answered on vehicles/{id}/results (QoS 2) with the request's ID.
import Drivers
import Protocol

struct CloudInboundHandler {
    let cloud: AgentCloud
    let service: CarService
    let keys: KeyService
    let log: AgentLog
    /// Signed remote commands on vehicles/{id}/cmd (nil: answered `unsupported`).
    var remote: RemoteCommandService?
    /// Fleet key grants (enrollment by an owner, rotation by the current fleet key).
    var fleetKeys: FleetKeyService?
    /// The retained, owner-signed revocation list on vehicles/{id}/revocations.
    var revocationList: RevocationListService?
    /// OTA configuration documents (type "config"): the lead wires the config engineer's code.
    var configHandler: ((InboundEnvelope) -> Void)?
    /// The back end's request to publish a range of the event log again (EventResend).
    var eventResend: EventResend?

    func handle(_ message: InboundEnvelope) {
        let fault: FaultCode?
        switch message.type {
        case "command" where remote != nil && message.topic.hasSuffix("/cmd"):
            remote?.handle(message)
            return
        case "fleetKey" where fleetKeys != nil:
            fleetKeys?.handle(message)
            return
        case "revocationList" where revocationList != nil:
            revocationList?.handle(message)
            return
        case "config" where configHandler != nil && message.topic.hasSuffix("/config/desired"):
            configHandler?(message)
            return
        case "resendEvents" where eventResend != nil && message.topic.hasSuffix("/commands"):
            eventResend?.handle(message)
            return
        case "revocation":
            fault = service.withEngine { engine, now in
                let outcome = keys.applyRevocation(message.body, source: "cloud", engine: &engine, now: now)
                return (outcome.fault, outcome.actions)
            }
        default:
            // Remote commands, shares and configuration need their own signed formats (not in v1).
            log.info("cloud: \(message.type) message \(message.id) not supported by this version")
            cloud.publishResult(requestID: message.id, type: message.type, result: "unsupported", fault: nil)
            return
        }
        log.info("cloud: \(message.type) message \(message.id): \(fault?.name ?? "applied")")
        cloud.publishResult(requestID: message.id, type: message.type, result: fault == nil ? "ok" : "refused", fault: fault)
    }
}
