// `carkey-agent run` arguments, validated into typed values (usage errors name the option).
import CommandLineKit
import Protocol

struct RunOptions {
    static let defaultSimulatedVehicleID = "OCK-SIM-0001"
    static let socketFileName = "ble.sock"

    let stateDirectory: String
    let vehicleID: VehicleID
    let socketPath: String
    /// Owner keys enrolled in memory for the simulation (issue #4 replaces this).
    let simulatedOwners: [P256PublicKey]
    /// The cloud link, nil when the car runs offline.
    let cloud: CloudOptions?

    init(_ arguments: ParsedArguments) throws {
        guard arguments.flag("simulate") else {
            throw UsageError("'--simulate' is required: the BLE radio link is not implemented yet")
        }
        var directory = try arguments.require("state-dir")
        while directory.count > 1 && directory.hasSuffix("/") { directory.removeLast() }
        guard !directory.isEmpty else { throw UsageError.invalidValue("", for: "--state-dir", expected: "a directory path") }
        stateDirectory = directory

        let id = arguments.value("vehicle-id") ?? Self.defaultSimulatedVehicleID
        do {
            vehicleID = try VehicleID(id)
        } catch {
            throw UsageError.invalidValue(id, for: "--vehicle-id", expected: "1 to 32 printable ASCII characters")
        }
        socketPath = arguments.value("socket") ?? directory + "/" + Self.socketFileName
        cloud = try CloudOptions.parse(arguments)
        simulatedOwners = try arguments.values("simulate-owner").map { text in
            guard let bytes = Bytes(hex: text), bytes.count == P256PublicKey.sec1Length,
                  let key = try? P256PublicKey(sec1: bytes) else {
                throw UsageError.invalidValue(text.count <= 40 ? text : String(text.prefix(37)) + "...",
                                              for: "--simulate-owner", expected: "a SEC1 uncompressed P-256 public key (65 bytes hex)")
            }
            return key
        }
    }
}
