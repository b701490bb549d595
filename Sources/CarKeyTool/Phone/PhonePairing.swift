// `carkey phone enroll`: owner enrollment over the simulated link with the reference phone
// pairing state machine (PhonePairingSession, the SPAKE2+ prover of protocol.md 18.6). Every
// wait is bounded by the link timeout.
import Drivers
import Protocol

/// What followed a confirmed PairingResult (protocol.md section 18.12).
enum GrantOutcome {
    /// The car's advertising key, opened with this phone key.
    case received(AdvertisingKey)
    /// Nothing within the timeout, or the car closed the link: an older car without the grant.
    case notSent
    /// Something came that does not open as this car's grant for this key.
    case refused(PhoneError)
}

enum PairingOutcome {
    /// Enrolled; the car proved it knows the code.
    case paired(PhonePairingSession.Paired, grant: GrantOutcome)
    /// The car refused (cleartext fault or PairingResult): advice only. Also `wrongPairingCode`
    /// when the car's SPAKE2+ confirmation did not match the code: the phone sent no proof.
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
            case .paired(let paired): return .paired(paired, grant: receiveGrant(link, session: &session))
            case .refused(let code): return .refused(code)
            }
        }
    }

    /// One more message after PairingResult 0, bounded by the link timeout.
    private func receiveGrant(_ link: any PhoneLink, session: inout PhonePairingSession) -> GrantOutcome {
        let bytes: Bytes
        do {
            bytes = try link.receive()
        } catch {
            return .notSent
        }
        do throws(PhoneError) {
            return .received(try session.receiveGrant(bytes))
        } catch {
            return .refused(error)
        }
    }

    private func attempt<T>(_ body: () throws -> T) throws -> T {
        do { return try body() } catch { throw PhoneExchangeFailure(description: "\(error)") }
    }
}
