// The car a phone key enrolled with: its proven identity key and vehicle ID, saved beside the
// phone key as KEYFILE.car (mode 0600) by `carkey phone enroll`, so later visits pin them
// without --car-key and --vehicle (which still override). Format, one field per line:
//
//   vehicle-id OCK-SIM-0001
//   car-identity 04...   (65 bytes SEC1, hex)
//   advertising-key ...  (16 bytes, hex; only when the car granted one, protocol.md 18.12)
//
// Unknown lines are ignored, so older tools read newer files (without the key) and files
// written before the advertising key still read (key nil). The key is a secret: the file is
// owner-only and the key is never printed.
#if canImport(Glibc)
import Glibc
#endif
import CommandLineKit
import Drivers
import Protocol

struct PairedCar: Equatable {
    let identityKey: P256PublicKey
    let vehicleID: VehicleID
    /// The car's advertising key, when it granted one at enrollment: resolves the rotating
    /// identifier in its BLE advertisements (`recognises`).
    let advertisingKey: AdvertisingKey?

    init(identityKey: P256PublicKey, vehicleID: VehicleID, advertisingKey: AdvertisingKey? = nil) {
        self.identityKey = identityKey
        self.vehicleID = vehicleID
        self.advertisingKey = advertisingKey
    }

    /// True when `identifier` (the 6 Manufacturer Specific Data bytes of an advertisement)
    /// is this car's current rotating identifier. Always false without an advertising key.
    func recognises(advertisedIdentifier identifier: Bytes) -> Bool {
        guard let advertisingKey else { return false }
        return AdvertisingIdentifier.resolve(identifier, key: advertisingKey)
    }

    static func path(forKey keyPath: String) -> String { keyPath + ".car" }

    /// The car to pin: each flag given wins, the rest comes from KEYFILE.car.
    static func resolve(carKey: P256PublicKey?, vehicleID: VehicleID?, keyPath: String) throws -> PairedCar {
        let path = path(forKey: keyPath)
        if let carKey, let vehicleID {
            // The saved advertising key still applies when the flags name the saved car.
            let saved = try? read(path)
            let key = saved.flatMap { $0.identityKey == carKey ? $0.advertisingKey : nil }
            return PairedCar(identityKey: carKey, vehicleID: vehicleID, advertisingKey: key)
        }
        guard let saved = try read(path) else {
            throw UsageError("give '--car-key' and '--vehicle', or enroll this key first (\(path) not found)")
        }
        let sameCar = carKey == nil || carKey == saved.identityKey
        return PairedCar(identityKey: carKey ?? saved.identityKey, vehicleID: vehicleID ?? saved.vehicleID,
                         advertisingKey: sameCar ? saved.advertisingKey : nil)
    }

    /// nil when the file does not exist; a usage error naming the file when it is malformed.
    static func read(_ path: String) throws -> PairedCar? {
        let bytes: Bytes
        do {
            bytes = try Files.read(path, limit: 4096)
        } catch let error as Errno where error.rawValue == ENOENT {
            return nil
        } catch {
            throw UsageError("cannot read '\(path)': \(error)")
        }
        var vehicle: VehicleID?
        var identity: P256PublicKey?
        var advertisingKey: AdvertisingKey?
        for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") {
            if line.hasPrefix("vehicle-id ") {
                vehicle = try? VehicleID(String(line.dropFirst("vehicle-id ".count)))
            } else if line.hasPrefix("car-identity ") {
                identity = Bytes(hex: String(line.dropFirst("car-identity ".count))).flatMap { try? P256PublicKey(sec1: $0) }
            } else if line.hasPrefix("advertising-key ") {
                // Present but unreadable is an error (never silently "no key"); the value is not echoed.
                guard let key = Bytes(hex: String(line.dropFirst("advertising-key ".count))).flatMap({ try? AdvertisingKey(bytes: $0) }) else {
                    throw UsageError("'\(path)' has an advertising-key line that is not 16 bytes of hex")
                }
                advertisingKey = key
            }
        }
        guard let vehicle, let identity else { throw UsageError("'\(path)' is not a paired-car file (vehicle-id and car-identity lines)") }
        return PairedCar(identityKey: identity, vehicleID: vehicle, advertisingKey: advertisingKey)
    }

    var fileText: String {
        var text = "vehicle-id \(vehicleID)\ncar-identity \(identityKey.sec1.hexString)\n"
        if let advertisingKey { text += "advertising-key \(advertisingKey.bytes.hexString)\n" }
        return text
    }

    func write(to path: String) throws {
        try Files.writeAtomically(Bytes(fileText.utf8), to: path, mode: 0o600)
    }
}
