// Public facts about this car, written beside the store so tools and tests can find them:
// DIR/car-identity.pub (PEM, 0644: phones pin it) and DIR/vehicle-id (one line, 0644).
// A file that already says the same is left alone: rewriting it on every start would make a
// start-up on a full disk fail for nothing (the atomic write needs room for a second copy).
import Drivers
import Protocol

enum StateFiles {
    static let identityFileName = "car-identity.pub"
    static let vehicleIDFileName = "vehicle-id"

    static func write(identity: P256PublicKey, vehicleID: VehicleID, in directory: String) throws {
        try writeIfChanged(Bytes(try identity.pemRepresentation().utf8), to: directory + "/" + identityFileName)
        try writeIfChanged(vehicleID.bytes + [0x0A], to: directory + "/" + vehicleIDFileName)
    }

    private static func writeIfChanged(_ bytes: Bytes, to path: String) throws {
        if (try? Files.read(path, limit: 4096)) == bytes, (try? Files.mode(of: path)) == 0o644 { return }
        try Files.writeAtomically(bytes, to: path, mode: 0o644)
    }
}
