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

    func handle(_ message: InboundEnvelope) {
        let fault: FaultCode?
        switch message.type {
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
