// What `carkey phone` prints: the result first (`ok` or `fault: NAME (CODE)`), then the vehicle
// state, the session facts and the timings; remediation advice goes to stderr.
import CommandLineKit
import Protocol

enum PhoneReport {
    /// Prints `outcome` and returns the exit status: 0 only for an ok Response.
    static func print(_ outcome: PhoneOutcome, command: CommandCode) -> Int32 {
        switch outcome {
        case .response(let body, let session, _, let handshakeMillis, let commandMillis):
            Swift.print(body.isOK ? "ok" : faultLine(body.result))
            Swift.print("command: \(command)")
            Swift.print("vehicle state: \(body.vehicleState.summary)")
            Swift.print("key: \(session.role), permissions \(session.permissions)")
            Swift.print("car time: \(ISO8601.format(Int64(body.carTime))) (car clock \(session.clockTrusted ? "trusted" : "not trusted"))")
            Swift.print("handshake ms: \(format(handshakeMillis))")
            Swift.print("command ms: \(format(commandMillis))")
            if let fault = body.fault { writeStderr("carkey phone: \(fault.remediation)\n") }
            return body.isOK ? 0 : 1
        case .faultBeforeSession(let message):
            Swift.print(faultLine(message.code))
            if let fault = message.fault { writeStderr("carkey phone: \(fault.remediation)\n") }
            return 1
        case .refusedByPhone(let error, let pinned):
            if case .wrongVehicle = error { Swift.print(faultLine(FaultCode.wrongVehicle.rawValue)) } else { Swift.print("refused: \(error)") }
            writeStderr("carkey phone: refused by the phone before signing: \(error)\n")
            if let advice = refusalAdvice(error, pinned: pinned) { writeStderr("carkey phone: \(advice)\n") }
            return 1
        }
    }

    /// What a refusal before signing most likely means and what to do: the usual cause is a
    /// car this key was not enrolled with, or a car whose identity changed, not an attack.
    static func refusalAdvice(_ error: PhoneError, pinned: [PairedCar]) -> String? {
        let names = pinned.map(\.vehicleID.description).joined(separator: ", ")
        switch error {
        case .wrongVehicle(let named):
            return "this car says it is vehicle \(named), and this visit pins \(names): nothing was signed. If it is your car, "
                + "enroll this key with it (carkey-agent pair, then carkey phone enroll), or give its --car-key and --vehicle"
        case .carSignatureInvalid:
            return "this car says it is vehicle \(names) but does not prove the identity key pinned for it: nothing was signed. "
                + "If that car's identity was replaced (a new store, a key vault migration with --new-identity), enroll again; "
                + "otherwise this is not the car you pinned"
        default:
            return nil
        }
    }

    /// `fault: unknownKey (1)`, or the bare number for a code this build does not know.
    static func faultLine(_ code: UInt16) -> String {
        "fault: " + (FaultCode(rawValue: code)?.description ?? "\(code) (unknown code)")
    }

    static func format(_ millis: Double) -> String {
        let hundredths = Int((millis * 100).rounded())
        let fraction = hundredths % 100
        return "\(hundredths / 100).\(fraction < 10 ? "0" : "")\(fraction)"
    }
}
