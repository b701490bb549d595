// status: the car at a glance for a field engineer: locks, doors, trunk, proximity, actuators,
// pairing, cloud link, outbox queue, store size and disk, clock trust, service mode.
import Drivers
import Protocol

final class StatusCommand: ConsoleCommandGroup {
    private let context: ConsoleContext
    private let serviceRemaining: () -> UInt64

    init(context: ConsoleContext, serviceRemaining: @escaping () -> UInt64) {
        self.context = context
        self.serviceRemaining = serviceRemaining
    }

    let help: [(usage: String, summary: String)] = [("status", "locks, doors, trunk, proximity, cloud link, queue, clock")]
    let verbs: Set<String> = ["status"]

    func run(_ words: [String]) -> [String] {
        guard words.count == 1 else { return ConsoleText.usage("status") }
        let actuator = context.body.actuator
        let model = actuator.stateModel
        return [
            "vehicle: \(context.config.vehicleID?.description ?? "-"), state \(actuator.state)",
            "locks: \(GPIOActuator.lockWord(model.locked)) (from \(model.lockSource))",
            "doors: \(model.doorOpen ? "open" : "closed")",
            "trunk: \(model.trunkOpen ? "open" : "closed and latched")",
            "proximity: " + (context.proximityLine?() ?? "no UWB module (decisions without distance)"),
            "phone link: " + linkLine(),
            "actuators: " + actuatorLine(actuator),
            "pairing window: " + (context.isPairingWindowOpen.map { $0() ? "open" : "closed" } ?? "not available (owner enrollment not wired yet)"),
            "cloud link: " + cloudLine(),
            "outbox queue: " + queueLine(),
            "store: " + storeLine(),
            "audit log: " + (context.auditStats.map { AuditCommitStats.line($0()) } ?? "not available"),
            "clock: " + clockLine(),
            "service mode: " + (serviceRemaining() > 0 ? "on (\(serviceRemaining() / 1000) s left)" : "off"),
            "console: \(context.endpoint), \(context.consoleDroppedLines()) output line(s) dropped (nobody reading)",
        ]
    }

    private func actuatorLine(_ actuator: GPIOActuator) -> String {
        if let reason = actuator.latchedReason { return "DISABLED after a failure: \(reason) (restart the agent after checking the wiring)" }
        if let running = actuator.inProgress { return "busy (\(VehicleEvents.name(running)) in progress)" }
        return "idle"
    }

    private func linkLine() -> String {
        guard let snapshot = context.linkSnapshot?() else { return "not available" }
        let rssi = snapshot.links.compactMap(\.facts.rssi)
        return "\(snapshot.endpoint), \(snapshot.links.count) of \(snapshot.maxLinks) link(s) open"
            + (rssi.isEmpty ? "" : ", strongest RSSI \(rssi.max()!) dBm")
    }

    private func cloudLine() -> String {
        guard let snapshot = context.cloudSnapshot?() else { return "not configured (the car runs offline)" }
        let inbound = "; inbound \(snapshot.inboundAccepted) accepted, \(snapshot.inboundRejected) rejected, \(snapshot.inboundShed) shed"
        if snapshot.connected {
            return "connected" + (snapshot.endpoint.map { " to \($0)" } ?? "") + " (birth \(snapshot.birth)"
                + (snapshot.sessionExpiryCapSeconds.map { ", broker caps the session expiry at \($0) s" } ?? "") + ")" + inbound
        }
        return "disconnected" + (snapshot.lastError.map { " (last error: \($0))" } ?? "") + inbound
    }

    private func queueLine() -> String {
        do {
            let depth = try context.store.read { try $0.outboxDepth() }
            return "\(depth) message(s) waiting for the cloud"
        } catch {
            return "unknown (\(error))"
        }
    }

    /// The budget and the disk: what a field engineer checks first when events go missing.
    private func storeLine() -> String {
        do {
            let status = try context.store.spaceStatus()
            var line = "\(status.usedBytes >> 10) KiB in use"
            if let budget = status.budgetBytes { line += " of \(budget >> 10) KiB" }
            if status.pruned.total > 0 { line += ", \(status.pruned.total) event(s) pruned (\(status.pruned.unpublished) unpublished)" }
            if status.diskFull { line += ", DISK FULL (\((status.freeDiskBytes ?? 0) >> 10) KiB free)" }
            if status.budgetBytes != nil && !status.reservePresent { line += ", no reserve file" }
            return line
        } catch {
            return "unknown (\(error))"
        }
    }

    private func clockLine() -> String {
        let now = context.clock.now()
        let mark = context.clock.trustedMark.map { "trusted-time mark \(ISO8601.format($0))" } ?? "no trusted-time mark yet"
        return (now.wallClockTrusted ? "trusted" : "not trusted, time-limited shares are refused") + " (\(mark))"
    }
}
