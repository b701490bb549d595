// `carkey phone enroll`: owner enrollment over the simulated link with the reference phone
// pairing state machine (PhonePairingSession). Every wait is bounded by the link timeout.
import Drivers
import Protocol

enum PairingOutcome {
    /// Enrolled; the car proved it knows the code.
    case paired(PhonePairingSession.Paired)
    /// The car refused (cleartext fault or PairingResult): advice only.
    case refused(UInt16)
    /// The phone refused the car's PairingChallenge or result and pinned nothing.
    case refusedByPhone(PhoneError)
}

struct PhonePairing {
    let options: PhoneOptions
    let code: PairingCode

    func run() throws -> PairingOutcome {
        var session = PhonePairingSession(longTermKey: options.key, code: code, expectedVehicleID: options.expectedVehicleID)
        let link = try attempt { try options.transport.connect(options: options) }
        try attempt { try link.send(try session.start()) }
        while true {
            let bytes = try attempt { try link.receive() }
            let event: PhonePairingSession.Event
            do throws(PhoneError) {
                event = try session.receive(bytes)
            } catch {
                switch error {
                case .wrongVehicle, .carSignatureInvalid, .pairingNotConfirmed: return .refusedByPhone(error)
                default: throw PhoneExchangeFailure(description: "the car sent something the phone refuses: \(error)")
                }
            }
            switch event {
            case .send(let proof): try attempt { try link.send(proof) }
            case .paired(let paired): return .paired(paired)
            case .refused(let code): return .refused(code)
            }
        }
    }

    private func attempt<T>(_ body: () throws -> T) throws -> T {
        do { return try body() } catch { throw PhoneExchangeFailure(description: "\(error)") }
    }
}
