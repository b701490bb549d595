// service on PIN / service off, and actuate lock|unlock|trunk: a field engineer's test of the
// actuators. Pulses go through the same actuator and interlock as a phone's commands (busy is
// refused, a latched failure refuses everything), and each one is an event in the log.
import Drivers
import Protocol

final class ServiceCommands: ConsoleCommandGroup {
    private let context: ConsoleContext
    private var mode: ServiceMode

    init(context: ConsoleContext) {
        self.context = context
        mode = ServiceMode(pin: context.config.servicePIN, timeoutSeconds: context.config.serviceTimeoutSeconds)
    }

    let help: [(usage: String, summary: String)] = [
        ("service on PIN | service off", "enter (times out) or leave service mode"),
        ("actuate lock|unlock|trunk", "pulse an actuator (service mode only)"),
    ]
    let verbs: Set<String> = ["service", "actuate"]

    /// Milliseconds left in service mode, for `status`.
    var remainingMillis: UInt64 { mode.remaining(now: context.clock.monotonicMillis) }

    func run(_ words: [String]) -> [String] {
        words[0] == "service" ? service(Array(words.dropFirst())) : actuate(Array(words.dropFirst()))
    }

    private func service(_ arguments: [String]) -> [String] {
        let now = context.clock.monotonicMillis
        switch (arguments.first, arguments.count) {
        case (nil, _):
            return ["service mode: " + (mode.isActive(now: now) ? "on (\(mode.remaining(now: now) / 1000) s left)" : "off")]
        case ("off", 1):
            mode.disable()
            context.body.events.service("service-off", result: "ok")
            return ["service mode: off"]
        case ("on", 2):
            return enable(arguments[1], now: now)
        default:
            return ConsoleText.usage("service on PIN | service off")
        }
    }

    /// The PIN never appears in an answer, the log or an event, right or wrong.
    private func enable(_ attempt: String, now: UInt64) -> [String] {
        switch mode.enable(attempt: attempt, now: now) {
        case .enabled(let until):
            context.log.warn("console: service mode on for \((until - now) / 1000) s")
            context.body.events.service("service-on", result: "ok")
            return ["service mode: on for \((until - now) / 1000) s (service off to leave)"]
        case .wrongPIN(let left):
            context.log.warn("console: wrong service PIN")
            context.body.events.service("service-on", result: "refused", fault: "wrongPIN")
            return ["error: wrong PIN (\(left) more attempt(s) before a lockout)"]
        case .lockedOut(let remaining):
            context.log.warn("console: service PIN attempts locked out for \(remaining / 1000) s")
            context.body.events.service("service-on", result: "refused", fault: "lockedOut")
            return ["error: too many wrong PINs; try again in \((remaining + 999) / 1000) s"]
        case .notConfigured:
            return ["error: service mode is disabled: no service.pin in the config file"]
        }
    }

    private func actuate(_ arguments: [String]) -> [String] {
        let usage = "actuate lock|unlock|trunk"
        guard arguments.count == 1 else { return ConsoleText.usage(usage) }
        let actuation: Actuation
        switch arguments[0] {
        case "lock": actuation = .lock
        case "unlock": actuation = .unlock
        case "trunk": actuation = .trunkRelease
        default: return ConsoleText.usage(usage)
        }
        guard mode.isActive(now: context.clock.monotonicMillis) else {
            return ["error: actuate needs service mode (service on PIN)"]
        }
        let name = VehicleEvents.name(actuation)
        if let refusal = context.body.actuator.startService(actuation) {
            context.body.events.service(name, result: "refused", fault: refusal.fault?.name)
            return ["error: \(refusal.summary)"]
        }
        context.log.info("console: service test \(name) started")
        return ["actuate \(name): pulsing..."]
    }

    /// The end of a service pulse (ActuationCompletions), shown on the console and recorded.
    func finished(_ actuation: Actuation, _ outcome: CommandOutcome) -> [String] {
        let name = VehicleEvents.name(actuation)
        context.log.info("console: service test \(name): \(outcome.summary), result \(outcome.fault?.name ?? "ok"), state \(outcome.state)")
        context.body.events.service(name, result: outcome.fault == nil ? "ok" : "failed", fault: outcome.fault?.name)
        return ["actuate \(name): \(outcome.summary); result \(outcome.fault?.name ?? "ok"); state \(outcome.state)"]
    }
}
