// What `carkey phone` prints: the result first (`ok` or `fault: NAME (CODE)`), then the vehicle
// state, the session facts and the timings, or all of it as one JSON object (--json);
// remediation advice goes to stderr either way.
import CommandLineKit
import Drivers
import Protocol

enum PhoneReport {
    /// Prints `outcome` and returns the exit status: 0 only for an ok Response.
    static func print(_ outcome: PhoneOutcome, command: CommandCode, json: Bool) -> Int32 {
        switch outcome {
        case .response(let body, let session, let car, let handshakeMillis, let commandMillis):
            if json {
                Swift.print(JSONValue.object([
                    ("result", .string(body.isOK ? "ok" : "fault")), ("fault", body.isOK ? .null : faultJSON(body.result)),
                    ("command", .string(command.name)), ("vehicle", .string(car.vehicleID.description)),
                    ("vehicleState", vehicleStateJSON(body.vehicleState)),
                    ("key", .object([("role", .string("\(session.role)")), ("permissions", .string("\(session.permissions)"))])),
                    ("carTime", .string(ISO8601.format(Int64(body.carTime)))), ("carClockTrusted", .bool(session.clockTrusted)),
                    ("handshakeMs", .raw(format(handshakeMillis))), ("commandMs", .raw(format(commandMillis))),
                ]).serialized)
            } else {
                Swift.print(body.isOK ? "ok" : faultLine(body.result))
                Swift.print("command: \(command)")
                Swift.print("vehicle state: \(body.vehicleState.summary)")
                Swift.print("key: \(session.role), permissions \(session.permissions)")
                Swift.print("car time: \(ISO8601.format(Int64(body.carTime))) (car clock \(session.clockTrusted ? "trusted" : "not trusted"))")
                Swift.print("handshake ms: \(format(handshakeMillis))")
                Swift.print("command ms: \(format(commandMillis))")
            }
            if let fault = body.fault { writeStderr("carkey phone: \(fault.remediation)\n") }
            return body.isOK ? 0 : 1
        case .faultBeforeSession(let message):
            Swift.print(json ? JSONValue.object([("result", .string("fault")), ("fault", faultJSON(message.code)),
                                                 ("command", .string(command.name)), ("stage", .string("handshake"))]).serialized
                             : faultLine(message.code))
            if let fault = message.fault { writeStderr("carkey phone: \(fault.remediation)\n") }
            return 1
        case .refusedByPhone(let error, let pinned):
            Swift.print(json ? refusedJSON(error) : refusedLine(error))
            writeStderr("carkey phone: refused by the phone before signing: \(error)\n")
            if let advice = refusalAdvice(error, pinned: pinned) { writeStderr("carkey phone: \(advice)\n") }
            return 1
        }
    }

    /// The first line when the phone refused the car: a wrong vehicle reads like the car's fault.
    static func refusedLine(_ error: PhoneError) -> String {
        if case .wrongVehicle = error { return faultLine(FaultCode.wrongVehicle.rawValue) }
        return "refused: \(error)"
    }

    /// `{"result":"refused","fault":...,"reason":...}`: the phone refused the car, signing nothing.
    static func refusedJSON(_ error: PhoneError) -> String {
        var fault = JSONValue.null
        if case .wrongVehicle = error { fault = faultJSON(FaultCode.wrongVehicle.rawValue) }
        return JSONValue.object([("result", .string("refused")), ("fault", fault), ("reason", .string("\(error)"))]).serialized
    }

    /// `{"code":N,"name":NAME}`, the name null for a code this build does not know.
    static func faultJSON(_ code: UInt16) -> JSONValue {
        .object([("code", .integer(Int64(code))), ("name", FaultCode(rawValue: code).map { .string($0.name) } ?? .null)])
    }

    /// The state in words and flag by flag (the same object as `carkey-agent status --json`).
    static func vehicleStateJSON(_ state: VehicleState) -> JSONValue {
        .object([
            ("summary", .string(state.summary)), ("bits", .integer(Int64(state.rawValue))),
            ("locked", .bool(state.contains(.locked))), ("driverDoorOpen", .bool(state.contains(.driverDoorOpen))),
            ("anyDoorOpen", .bool(state.contains(.anyDoorOpen))), ("trunkOpen", .bool(state.contains(.trunkOpen))),
            ("trunkLocked", .bool(state.contains(.trunkLocked))),
        ])
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
