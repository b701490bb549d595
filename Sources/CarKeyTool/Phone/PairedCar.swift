// The car a phone key enrolled with: its proven identity key and vehicle ID, saved beside the
// phone key as KEYFILE.car (mode 0600) by `carkey phone enroll`, so later visits pin them
// without --car-key and --vehicle (which still override). Format, one field per line:
//
//   vehicle-id OCK-SIM-0001
//   car-identity 04...   (65 bytes SEC1, hex)
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CommandLineKit
import Drivers
import Protocol

struct PairedCar: Equatable {
    let identityKey: P256PublicKey
    let vehicleID: VehicleID

    static func path(forKey keyPath: String) -> String { keyPath + ".car" }

    /// The car to pin: each flag given wins, the rest comes from KEYFILE.car.
    static func resolve(carKey: P256PublicKey?, vehicleID: VehicleID?, keyPath: String) throws -> PairedCar {
        if let carKey, let vehicleID { return PairedCar(identityKey: carKey, vehicleID: vehicleID) }
        let path = path(forKey: keyPath)
        guard let saved = try read(path) else {
            throw UsageError("give '--car-key' and '--vehicle', or enroll this key first (\(path) not found)")
        }
        return PairedCar(identityKey: carKey ?? saved.identityKey, vehicleID: vehicleID ?? saved.vehicleID)
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
        for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") {
            if line.hasPrefix("vehicle-id ") {
                vehicle = try? VehicleID(String(line.dropFirst("vehicle-id ".count)))
            } else if line.hasPrefix("car-identity ") {
                identity = Bytes(hex: String(line.dropFirst("car-identity ".count))).flatMap { try? P256PublicKey(sec1: $0) }
            }
        }
        guard let vehicle, let identity else { throw UsageError("'\(path)' is not a paired-car file (vehicle-id and car-identity lines)") }
        return PairedCar(identityKey: identity, vehicleID: vehicle)
    }

    var fileText: String { "vehicle-id \(vehicleID)\ncar-identity \(identityKey.sec1.hexString)\n" }

    func write(to path: String) throws {
        try Files.writeAtomically(Bytes(fileText.utf8), to: path, mode: 0o600)
    }
}
