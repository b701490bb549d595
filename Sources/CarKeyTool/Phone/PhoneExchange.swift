// One phone visit: connect, handshake, one command, with the reference phone state machine
// (PhoneProtocolSession) over the simulated link. Every wait is bounded by the link timeout.
#if canImport(Glibc)
import Glibc
#endif
import CommandLineKit
import Drivers
import Protocol

enum PhoneOutcome {
    /// The car answered the command (result ok or a fault inside the session); `car` is the pin
    /// the car proved it holds.
    case response(ResponseBody, session: SessionAcceptedBody, car: PairedCar, handshakeMillis: Double, commandMillis: Double)
    /// A cleartext Fault before the session: the handshake is over. Unauthenticated advice.
    case faultBeforeSession(FaultMessage)
    /// The phone refused the car's Challenge and signed nothing; `pinned` is what it expected.
    case refusedByPhone(PhoneError, pinned: [PairedCar])
}

struct PhoneExchangeFailure: Error, CustomStringConvertible {
    let description: String
}

/// One ephemeral key for a whole visit (still fresh per visit): the Hello does not depend on the
/// pinned car, so a session for another pin can answer the Challenge that came for this Hello.
private struct VisitEphemeralKey: EphemeralKeySource {
    let key: P256PrivateKey
    func makeEphemeralKey() throws -> P256PrivateKey { key }
}

struct PhoneExchange {
    let options: PhoneOptions
    let clock: any MonotonicClock = SystemClock()

    func run() throws -> PhoneOutcome {
        guard var car = options.cars.first, case .command(let command, let args) = options.action else {
            throw PhoneExchangeFailure(description: "no car to pin and no command to send")
        }
        let ephemeral = VisitEphemeralKey(key: try attempt { try SystemEphemeralKeySource().makeEphemeralKey() })
        func phoneSession(pinning car: PairedCar) -> PhoneProtocolSession {
            var configuration = PhoneConfiguration(longTermKey: options.key, carIdentityKey: car.identityKey, vehicleID: car.vehicleID)
            configuration.signatureEncoding = options.encoding
            configuration.shareCertificate = options.shareCertificate
            configuration.ephemeralKeys = ephemeral
            return PhoneProtocolSession(configuration: configuration)
        }
        var phone = phoneSession(pinning: car)
        let link = try attempt { try options.transport.connect(options: options) }

        let handshakeStart = Self.preciseMillis()
        let hello = try attempt { try phone.start() }
        try attempt { try link.send(hello) }
        var session: SessionAcceptedBody?
        while session == nil {
            let bytes = try attempt { try link.receive() }
            let event: PhoneEvent
            do throws(PhoneError) {
                event = try phone.receive(bytes, now: now())
            } catch {
                // With several cars pinned (no --vehicle), the Challenge names the car: answer it
                // with that car's pin, whose identity key its signature must then verify under.
                if case .wrongVehicle(let named) = error, let other = options.cars.first(where: { $0.vehicleID.string == named }) {
                    car = other
                    phone = phoneSession(pinning: other)
                    guard try attempt({ try phone.start() }) == hello else {
                        throw PhoneExchangeFailure(description: "the Hello changed with the pinned car")
                    }
                    event = try attempt { try phone.receive(bytes, now: now()) }
                } else {
                    switch error {
                    case .wrongVehicle: return .refusedByPhone(error, pinned: options.cars)
                    case .carSignatureInvalid, .invalidCarEphemeralKey: return .refusedByPhone(error, pinned: [car])
                    default: throw PhoneExchangeFailure(description: "the car sent something the phone refuses: \(error)")
                    }
                }
            }
            switch event {
            case .send(let response): try attempt { try link.send(response) }
            case .established(let accepted): session = accepted
            case .fault(let fault): return .faultBeforeSession(fault)
            case .response: throw PhoneExchangeFailure(description: "unexpected Response during the handshake")
            }
        }
        let handshakeMillis = Self.preciseMillis() - handshakeStart

        if let uwb = options.uwb {
            // Ranging first (docs/protocol.md 19): ask what the car's module accepts, propose a
            // setup within it, and let the car measure the distance while the phone waits. A car
            // without a module (rangingUnsupported) or a refused setup is the visit's answer.
            let setupStart = Self.preciseMillis()
            try attempt { try link.send(try phone.rangingCapabilitiesCommand(now: now())) }
            let asked = try awaitResponse(link, &phone)
            let setup: RangingSetup
            if let capabilities = phone.carRangingCapabilities {
                writeStderr("carkey phone: uwb: the car accepts \(capabilities)\n")
                setup = try attempt { try capabilities.proposal(using: SystemRandom(), roundIntervalMillis: uwb.intervalMillis) }
            } else if asked.fault == .malformedMessage && asked.commandByte == ResponseBody.noCommand {
                // A car older than the query: the protocol's preferred values, as before it.
                writeStderr("carkey phone: uwb: the car does not tell its capabilities; proposing the preferred values\n")
                setup = try attempt { try RangingSetup.random(using: SystemRandom(), roundIntervalMillis: uwb.intervalMillis) }
            } else {
                return .response(asked, session: session!, car: car, handshakeMillis: handshakeMillis,
                                 commandMillis: Self.preciseMillis() - setupStart)
            }
            try attempt { try link.send(try phone.rangingSetupCommand(setup, now: now())) }
            let answer = try awaitResponse(link, &phone)
            guard answer.result == 0 else {
                return .response(answer, session: session!, car: car, handshakeMillis: handshakeMillis,
                                 commandMillis: Self.preciseMillis() - setupStart)
            }
            writeStderr("carkey phone: uwb: ranging session \(String(setup.sessionID, radix: 16)) set up, ranging for \(uwb.waitMillis) ms\n")
            clock.sleep(millis: uwb.waitMillis)
        }

        let commandStart = Self.preciseMillis()
        try attempt { try link.send(try phone.command(command, args: args, now: now())) }
        let body = try awaitResponse(link, &phone)
        return .response(body, session: session!, car: car, handshakeMillis: handshakeMillis, commandMillis: Self.preciseMillis() - commandStart)
    }

    /// The next Response in the session (other events are not expected here).
    private func awaitResponse(_ link: any PhoneLink, _ phone: inout PhoneProtocolSession) throws -> ResponseBody {
        while true {
            let bytes = try attempt { try link.receive() }
            let event = try attempt { try phone.receive(bytes, now: now()) }
            if case .response(let body) = event { return body }
        }
    }

    private func now() -> ProtocolTime {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        // The phone's own clock; the car decides whether it trusts its own.
        return ProtocolTime(monotonicMillis: clock.nowMillis(), wallSeconds: Int64(spec.tv_sec), wallClockTrusted: true)
    }

    /// Runs a link or protocol step; its error becomes a one-line failure.
    private func attempt<T>(_ body: () throws -> T) throws -> T {
        do { return try body() } catch { throw PhoneExchangeFailure(description: "\(error)") }
    }
}

extension PhoneExchange {
    /// Monotonic milliseconds with a fractional part, for the printed timings.
    static func preciseMillis() -> Double {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return Double(spec.tv_sec) * 1000 + Double(spec.tv_nsec) / 1_000_000
    }
}
