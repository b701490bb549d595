// What `carkey phone enroll` does with the outcome: pin the proven car (KEYFILE.car) and say
// so, or print the refusal like any other fault.
import CommandLineKit
import Drivers
import Protocol

enum PhoneEnrollment {
    /// Prints the result and returns the exit status: 0 only when enrolled and saved.
    static func finish(_ outcome: PairingOutcome, options: PhoneOptions) throws -> Int32 {
        switch outcome {
        case .paired(let paired, let grant):
            if let expected = options.expectedCarKey, expected != paired.carIdentityKey {
                print("refused: the car's identity key is not the one given with --car-key")
                writeStderr("carkey phone: the car enrolled this key, but its identity differs from --car-key; nothing saved\n")
                return 1
            }
            var advertisingKey: AdvertisingKey?
            if case .received(let key) = grant { advertisingKey = key }
            let car = PairedCar(identityKey: paired.carIdentityKey, vehicleID: paired.vehicleID, advertisingKey: advertisingKey)
            let path = PairedCar.path(forKey: options.keyPath)
            // One pin per vehicle ID: another car's pin stays, so the key keeps working there.
            var pins = options.existingPins
            let change = pins.pin(car)
            do {
                try pins.write(to: path)
            } catch {
                throw PhoneExchangeFailure(description: "enrolled, but cannot save \(path): \(error)")
            }
            if case .replacedIdentity(let previous) = change {
                writeStderr("carkey phone: vehicle \(paired.vehicleID) was pinned to car key id \(KeyID(publicKey: previous)); "
                            + "this car proved the pairing code, so its identity replaces that pin\n")
            }
            let grantWord: String
            switch grant {
            case .received: grantWord = "received"
            case .notSent: grantWord = "none"
            case .refused(let error):
                grantWord = "refused"
                writeStderr("carkey phone: enrolled, but the advertising key grant was refused: \(error)\n")
            }
            if options.json {
                print(JSONValue.object([
                    ("result", .string("enrolled")), ("vehicle", .string(paired.vehicleID.description)),
                    ("carKeyID", .string(KeyID(publicKey: paired.carIdentityKey).description)), ("advertisingKey", .string(grantWord)),
                    ("saved", .string(path)), ("pinnedVehicles", .array(pins.cars.map { .string($0.vehicleID.description) })),
                ]).serialized)
                return 0
            }
            print("enrolled")
            print("vehicle: \(paired.vehicleID)")
            print("car key id: \(KeyID(publicKey: paired.carIdentityKey))")
            print("advertising key: " + (grantWord == "none" ? "none (this car does not send one)" : grantWord))
            print("saved: \(path)")
            if pins.cars.count > 1 { print("pinned cars: \(pins.vehicleList)") }
            return 0
        case .refused(let code):
            print(options.json ? JSONValue.object([("result", .string("fault")), ("fault", PhoneReport.faultJSON(code)),
                                                   ("command", .string("enroll"))]).serialized
                               : PhoneReport.faultLine(code))
            if let fault = FaultCode(rawValue: code) { writeStderr("carkey phone: \(fault.remediation)\n") }
            return 1
        case .refusedByPhone(let error):
            print(options.json ? PhoneReport.refusedJSON(error) : PhoneReport.refusedLine(error))
            writeStderr("carkey phone: refused by the phone, nothing pinned: \(error)\n")
            return 1
        }
    }
}
