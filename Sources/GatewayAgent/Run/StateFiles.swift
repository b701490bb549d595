// Public facts about this car, written beside the store so tools and tests can find them:
// DIR/car-identity.pub (PEM, 0644: phones pin it) and DIR/vehicle-id (one line, 0644).
import Drivers
import Protocol

enum StateFiles {
    static let identityFileName = "car-identity.pub"
    static let vehicleIDFileName = "vehicle-id"

    static func write(identity: P256PublicKey, vehicleID: VehicleID, in directory: String) throws {
        try Files.writeAtomically(Bytes(try identity.pemRepresentation().utf8), to: directory + "/" + identityFileName, mode: 0o644)
        try Files.writeAtomically(vehicleID.bytes + [0x0A], to: directory + "/" + vehicleIDFileName, mode: 0o644)
    }
}
