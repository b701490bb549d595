// Service mode on the console, and the actuator tests it allows: a field engineer's way to
// pulse the locks without a phone. Two ways in (docs/operations.md, "Service mode"):
// - `service challenge` / `service auth ANSWER`: the car shows a challenge, an owner key with
//   manage (or a fleet key) signs it on a laptop (`carkey service sign`), the answer is pasted
//   back (ServiceChallengeGate). The default: it needs no secret on the car.
// - `service on PIN`, when the config sets a PIN and does not turn it off: guesses are limited
//   across restarts (ServicePINLockout, counted in the store before each comparison).
// Pulses go through the same actuator and interlock as a phone's commands, and every
// authorisation, refusal and pulse is an event. The PIN never appears in an answer, the log or
// an event.
import Drivers
import Protocol

final class ServiceCommands: ConsoleCommandGroup {
    private let context: ConsoleContext
    private let random: any RandomSource
    private var mode: ServiceMode
    private var lockout: ServicePINLockout
    private var gate: ServiceChallengeGate

    init(context: ConsoleContext, random: any RandomSource = SystemRandom()) {
        self.context = context
        self.random = random
        mode = ServiceMode(timeoutSeconds: context.config.serviceTimeoutSeconds)
        gate = ServiceChallengeGate(vehicleID: context.vehicleID, lifetimeSeconds: UInt32(context.config.serviceChallengeSeconds))
        let now = context.clock.monotonicMillis
        switch ServiceLockoutStore.load(context.store) {
        case .state(let persisted):
            lockout = ServicePINLockout(persisted, nowMillis: now, wallSeconds: context.clock.eventTime().seconds)
        case .unreadable(let why):
            context.log.error("console: the service PIN's guess count is unreadable (\(why)): the PIN stays locked out for "
                              + "\(ServicePINLockout.maxLockoutMillis / 3_600_000) h; the signed challenge still works")
            lockout = .unreadable(nowMillis: now)
        }
        if lockout.failures > 0 {
            context.log.warn("console: \(lockout.failures) wrong service PIN(s) in a row before this start; "
                             + "PIN locked out for \(lockout.remainingMillis(nowMillis: now) / 1000) s")
        }
    }

    let help: [(usage: String, summary: String)] = [
        ("service challenge", "a challenge to sign with an owner or fleet key (carkey service sign)"),
        ("service auth ANSWER", "enter service mode with the signed answer"),
        ("service on PIN | service off", "enter with the PIN (if the config allows it) or leave service mode"),
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
            return state(now: now)
        case ("off", 1):
            mode.disable()
            context.body.events.service(.serviceOff, result: "ok")
            return ["service mode: off"]
        case ("challenge", 1):
            return challenge(now: now)
        case ("auth", 2):
            return authorise(arguments[1], now: now)
        case ("on", 2):
            return enable(pin: arguments[1], now: now)
        default:
            return ConsoleText.usage("service challenge | service auth ANSWER | service on PIN | service off")
        }
    }

    private func state(now: UInt64) -> [String] {
        var lines = ["service mode: " + (mode.isActive(now: now) ? "on (\(mode.remaining(now: now) / 1000) s left)" : "off")]
        let pin: String
        if context.config.servicePIN == nil {
            pin = "not set"
        } else if !context.config.servicePINEnabled {
            pin = "turned off (service.pinEnabled false)"
        } else {
            let locked = lockout.remainingMillis(nowMillis: now)
            pin = "on, \(lockout.failures) wrong in a row" + (locked > 0 ? ", locked out for \((locked + 999) / 1000) s" : "")
        }
        lines.append("ways in: signed challenge (service challenge); PIN \(pin)")
        return lines
    }

    private func challenge(now: UInt64) -> [String] {
        let nonce: Bytes
        do { nonce = try random.randomBytes(ServiceChallenge.nonceLength) } catch {
            context.log.error("console: no randomness for a service challenge: \(error)")
            return ["error: no challenge: the random source failed"]
        }
        let wall = context.clock.eventTime().seconds
        guard let challenge = try? gate.issue(nonce: nonce, wallSeconds: UInt32(clamping: max(0, wall)), nowMillis: now) else {
            return ["error: no challenge could be built"]
        }
        context.log.info("console: service challenge issued (valid \(gate.lifetimeSeconds) s)")
        let hex = challenge.encoded().hexString
        return ["service challenge for \(context.vehicleID), valid \(gate.lifetimeSeconds) s:",
                hex,
                "sign it with an owner key (manage) or a fleet key: carkey service sign --key KEY.pem --challenge \(hex)",
                "then: service auth ANSWER"]
    }

    private func authorise(_ answer: String, now: UInt64) -> [String] {
        guard let signers = context.serviceSigners else {
            return refused(fault: "notConfigured", "error: signed service authorisation is not wired into this agent")
        }
        do throws(FaultCode) {
            guard let bytes = Bytes(hex: answer) else { throw .malformedMessage }
            let authorised = try gate.authorise(bytes, nowMillis: now, signers: signers, isRevoked: { signers.isRevoked($0) })
            let signer = authorised.signer.keyID.bytes.hexString
            resetPINCount()
            let until = mode.enter(now: now)
            context.log.warn("console: service mode on for \((until - now) / 1000) s, authorised by \(authorised.signer.kind.rawValue) key \(signer)")
            context.body.events.service(.serviceOn, result: "ok", actor: signer)
            return ["service mode: on for \((until - now) / 1000) s, signed by \(authorised.signer.kind.rawValue) key \(signer) (service off to leave)"]
        } catch {
            context.log.warn("console: service authorisation refused: \(error.name)")
            return refused(fault: error.name, "error: service authorisation refused: \(error.name) (\(Self.explain(error)))")
        }
    }

    static func explain(_ fault: FaultCode) -> String {
        switch fault {
        case .malformedMessage: return "not a signed answer; paste what carkey service sign printed"
        case .unsupportedVersion: return "an answer format this car does not know"
        case .wrongVehicle: return "signed for another vehicle"
        case .reusedChallenge: return "that challenge was answered already; ask for a new one"
        case .unknownChallenge: return "not the challenge this car is waiting for; ask for a new one"
        case .challengeExpired: return "the challenge ran out; ask for a new one"
        case .revoked: return "the signing key is revoked"
        case .unknownKey: return "the signing key is not enrolled in this car"
        case .insufficientPermission: return "only an owner key with manage, or a fleet key, may authorise service mode"
        case .badSignature: return "the signature does not verify"
        default: return fault.name
        }
    }

    /// The PIN never appears in an answer, the log or an event, right or wrong.
    private func enable(pin attempt: String, now: UInt64) -> [String] {
        guard let pin = context.config.activeServicePIN else {
            let why = context.config.servicePIN == nil ? "no service PIN is set" : "the service PIN is turned off (service.pinEnabled false)"
            return refused(fault: "pinOff", "error: \(why); use service challenge")
        }
        let wall = context.clock.eventTime().seconds
        guard let counted = lockout.beforeAttempt(nowMillis: now, wallSeconds: wall) else {
            let remaining = lockout.remainingMillis(nowMillis: now)
            context.log.warn("console: service PIN attempt refused unchecked: locked out for \(remaining / 1000) s")
            return refused(fault: "lockedOut", "error: too many wrong PINs; try again in \((remaining + 999) / 1000) s")
        }
        // Counted as wrong before it is compared: a power cut after this cannot give the guess back.
        do { try ServiceLockoutStore.save(counted, in: context.store) } catch {
            context.log.error("console: service PIN attempt not checked: its count could not be stored: \(error)")
            return refused(fault: "internalError", "error: the attempt could not be recorded, so the PIN was not checked")
        }
        guard pin.matches(attempt) else {
            let outcome = lockout.wrong(nowMillis: now)
            context.log.warn("console: wrong service PIN (\(lockout.failures) in a row)")
            context.body.events.service(.serviceOn, result: "refused", fault: "wrongPIN")
            if outcome.left > 0 { return ["error: wrong PIN (\(outcome.left) more attempt(s) before a lockout)"] }
            return ["error: too many wrong PINs; try again in \(outcome.lockoutMillis / 1000) s"]
        }
        resetPINCount()
        let until = mode.enter(now: now)
        context.log.warn("console: service mode on for \((until - now) / 1000) s (PIN)")
        context.body.events.service(.serviceOn, result: "ok")
        return ["service mode: on for \((until - now) / 1000) s (service off to leave)"]
    }

    /// A correct authorisation, either way, clears the PIN's count.
    private func resetPINCount() {
        guard lockout.failures > 0 || lockout.lockedUntilMillis != nil else { return }
        lockout.reset()
        do { try ServiceLockoutStore.save(.clear, in: context.store) } catch {
            context.log.error("console: the service PIN's count could not be cleared (it resets at the next correct authorisation): \(error)")
        }
    }

    private func refused(fault: String, _ line: String) -> [String] {
        context.body.events.service(.serviceOn, result: "refused", fault: fault)
        return [line]
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
            return ["error: actuate needs service mode (service challenge, or service on PIN)"]
        }
        let name = VehicleEvents.name(actuation)
        if let refusal = context.body.actuator.startService(actuation) {
            context.body.events.service(.actuation(actuation), result: "refused", fault: refusal.fault?.name)
            return ["error: \(refusal.summary)"]
        }
        context.log.info("console: service test \(name) started")
        return ["actuate \(name): pulsing..."]
    }

    /// The end of a service pulse (ActuationCompletions), shown on the console and recorded.
    func finished(_ actuation: Actuation, _ outcome: CommandOutcome) -> [String] {
        let name = VehicleEvents.name(actuation)
        context.log.info("console: service test \(name): \(outcome.summary), result \(outcome.fault?.name ?? "ok"), state \(outcome.state)")
        context.body.events.service(.actuation(actuation), result: outcome.fault == nil ? "ok" : "failed", fault: outcome.fault?.name)
        return ["actuate \(name): \(outcome.summary); result \(outcome.fault?.name ?? "ok"); state \(outcome.state)"]
    }
}
