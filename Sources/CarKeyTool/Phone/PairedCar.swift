// The cars a phone key enrolled with: each car's proven identity key, vehicle ID and advertising
// key, saved beside the phone key as KEYFILE.car (mode 0600) by `carkey phone enroll`, so later
// visits pin them without --car-key and --vehicle (which still override). One pin per vehicle
// ID: enrolling the same key with a second car adds a pin, it never replaces the first car's.
// Format, one field per line, one block per car (a vehicle-id line starts a block):
//
//   vehicle-id OCK-SIM-0001
//   car-identity 04...   (65 bytes SEC1, hex)
//   advertising-key ...  (16 bytes, hex; only when the car granted one, protocol.md 18.12)
//
// A file with one block is the single-car file older tools wrote, and reads the same. Unknown
// lines are ignored, so files written before the advertising key still read (key nil). The key
// is a secret: the file is owner-only and the key is never printed.
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

    var fileText: String {
        var text = "vehicle-id \(vehicleID)\ncar-identity \(identityKey.sec1.hexString)\n"
        if let advertisingKey { text += "advertising-key \(advertisingKey.bytes.hexString)\n" }
        return text
    }
}

/// Every car pinned in one KEYFILE.car, in the order they were first enrolled.
struct PairedCars: Equatable {
    private(set) var cars: [PairedCar] = []

    init(_ cars: [PairedCar] = []) { self.cars = cars }

    var isEmpty: Bool { cars.isEmpty }

    func car(for vehicle: VehicleID) -> PairedCar? { cars.first { $0.vehicleID == vehicle } }

    /// "OCK-A, OCK-B", for messages.
    var vehicleList: String { cars.map(\.vehicleID.description).joined(separator: ", ") }

    enum PinChange: Equatable {
        case added
        /// The same car again (a new advertising key, or nothing new).
        case renewed
        /// The vehicle ID was pinned to another identity key, which this enrollment replaced.
        case replacedIdentity(previous: P256PublicKey)
    }

    /// Pins `car` under its vehicle ID; other vehicles' pins stay as they are.
    mutating func pin(_ car: PairedCar) -> PinChange {
        guard let index = cars.firstIndex(where: { $0.vehicleID == car.vehicleID }) else {
            cars.append(car)
            return .added
        }
        let previous = cars[index].identityKey
        cars[index] = car
        return previous == car.identityKey ? .renewed : .replacedIdentity(previous: previous)
    }

    /// An empty set when the file does not exist; a usage error naming the file when it is
    /// malformed (so nothing is overwritten by mistake).
    static func read(_ path: String) throws -> PairedCars {
        let bytes: Bytes
        do {
            bytes = try Files.read(path, limit: 256 * 1024)
        } catch let error as Errno where error.rawValue == ENOENT {
            return PairedCars()
        } catch {
            throw UsageError("cannot read '\(path)': \(error)")
        }
        var cars: [PairedCar] = []
        var vehicle: VehicleID?
        var identity: P256PublicKey?
        var advertisingKey: AdvertisingKey?
        var started = false
        func finish() throws {
            guard started else { return }
            guard let vehicle, let identity else {
                throw UsageError("'\(path)' is not a paired-car file (each car needs a vehicle-id and a car-identity line)")
            }
            guard !cars.contains(where: { $0.vehicleID == vehicle }) else {
                throw UsageError("'\(path)' pins vehicle \(vehicle) twice: keep one block per vehicle-id")
            }
            cars.append(PairedCar(identityKey: identity, vehicleID: vehicle, advertisingKey: advertisingKey))
        }
        for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") {
            if line.hasPrefix("vehicle-id ") {
                try finish()
                started = true
                identity = nil
                advertisingKey = nil
                vehicle = try? VehicleID(String(line.dropFirst("vehicle-id ".count)))
            } else if line.hasPrefix("car-identity ") {
                started = true
                identity = Bytes(hex: String(line.dropFirst("car-identity ".count))).flatMap { try? P256PublicKey(sec1: $0) }
            } else if line.hasPrefix("advertising-key ") {
                started = true
                // Present but unreadable is an error (never silently "no key"); the value is not echoed.
                guard let key = Bytes(hex: String(line.dropFirst("advertising-key ".count))).flatMap({ try? AdvertisingKey(bytes: $0) }) else {
                    throw UsageError("'\(path)' has an advertising-key line that is not 16 bytes of hex")
                }
                advertisingKey = key
            }
        }
        try finish()
        guard !cars.isEmpty else { throw UsageError("'\(path)' is not a paired-car file (vehicle-id and car-identity lines)") }
        return PairedCars(cars)
    }

    /// One block per car, separated by an empty line.
    var fileText: String { cars.map(\.fileText).joined(separator: "\n") }

    func write(to path: String) throws {
        try Files.writeAtomically(Bytes(fileText.utf8), to: path, mode: 0o600)
    }

    /// The cars this visit may be talking to: each flag given wins, the rest comes from the
    /// pins. Several only when no flag names one car and the file pins several: the car's
    /// Challenge then says which (PhoneExchange), and its signature must verify under that pin.
    static func resolve(carKey: P256PublicKey?, vehicleID: VehicleID?, keyPath: String, scanning: Bool) throws -> [PairedCar] {
        let path = PairedCar.path(forKey: keyPath)
        if let carKey, let vehicleID {
            // The saved advertising key still applies when the flags name the saved car.
            let saved = (try? read(path))?.car(for: vehicleID)
            return [PairedCar(identityKey: carKey, vehicleID: vehicleID,
                              advertisingKey: saved?.identityKey == carKey ? saved?.advertisingKey : nil)]
        }
        let pins = try read(path)
        guard !pins.isEmpty else {
            throw UsageError("give '--car-key' and '--vehicle', or enroll this key first (\(path) not found)")
        }
        if let vehicleID {
            guard let saved = pins.car(for: vehicleID) else {
                throw UsageError("\(path) pins no car with vehicle ID \(vehicleID) (it pins \(pins.vehicleList)): "
                                 + "enroll this key with that car, or give '--car-key' too")
            }
            return [saved]
        }
        if let carKey {
            if let saved = pins.cars.first(where: { $0.identityKey == carKey }) { return [saved] }
            guard pins.cars.count == 1 else {
                throw UsageError("'--car-key' matches none of the cars \(path) pins (\(pins.vehicleList)): give '--vehicle' too")
            }
            return [PairedCar(identityKey: carKey, vehicleID: pins.cars[0].vehicleID)]
        }
        if scanning && pins.cars.count > 1 {
            throw UsageError("\(path) pins \(pins.cars.count) cars (\(pins.vehicleList)): name the one to scan for with '--vehicle'")
        }
        return pins.cars
    }
}
