// `carkey phone` arguments, validated into typed values (usage errors name the option).
import CommandLineKit
import Drivers
import Protocol

struct PhoneOptions {
    /// What this visit does after connecting.
    enum Action {
        /// Handshake, then one command (args only for revoke).
        case command(CommandCode, args: Bytes)
        /// Owner enrollment with the code the car showed.
        case enroll(PairingCode)
    }

    static let commandNames: [(String, CommandCode)] = [
        ("unlock", .unlock), ("lock", .lock), ("trunk", .trunkRelease), ("status", .status), ("user-verified", .userVerified),
        ("revoke", .revoke),
    ]
    static let actionNamesForHelp = commandNames.map(\.0).joined(separator: ", ") + " or enroll"

    let key: P256PrivateKey
    let keyPath: String
    /// How to reach the car: the simulated link's socket, or Bluetooth LE.
    let transport: PhoneTransport
    let action: Action
    /// The cars a command may pin: --car-key/--vehicle, else KEYFILE.car's pins (several only
    /// when the file pins several cars and no flag picks one). Empty for enroll.
    let cars: [PairedCar]
    /// enroll: the pins already in KEYFILE.car, read before anything is sent (a malformed file
    /// stops the visit before the car spends its pairing code).
    let existingPins: PairedCars
    /// enroll: the car must present this vehicle ID / identity key (when given).
    let expectedVehicleID: VehicleID?
    let expectedCarKey: P256PublicKey?
    let shareCertificate: Bytes
    let encoding: SignatureEncoding
    let timeoutMillis: UInt64
    /// --json: one JSON object on stdout instead of the lines.
    let json: Bool
    /// --ble --scan: how long to look for the car.
    let scanTimeoutMillis: UInt64
    /// --uwb: ranging set up before the command (round interval, time to range first).
    let uwb: (intervalMillis: UInt16, waitMillis: UInt64)?
    /// --misbehave: one rule broken on purpose (testing a car's conformance report).
    let misbehaviour: Misbehaviour?
    /// --misbehave-delay: how late late-auth answers the Challenge.
    let misbehaveDelayMillis: UInt64

    /// The command sent (enroll has none).
    var command: CommandCode? {
        if case .command(let command, _) = action { return command }
        return nil
    }

    init(_ arguments: ParsedArguments) throws {
        keyPath = try arguments.require("key")
        key = try Self.privateKey(at: keyPath)
        transport = try PhoneTransport.parse(arguments)
        let scanSeconds = try arguments.integer("scan-timeout") ?? 10
        guard (1...300).contains(scanSeconds) else {
            throw UsageError.invalidValue("\(scanSeconds)", for: "--scan-timeout", expected: "1 to 300 seconds")
        }
        scanTimeoutMillis = UInt64(scanSeconds) * 1000
        action = try Self.action(arguments)

        let carKey = try Self.carKey(arguments)
        let vehicle = try Self.vehicleID(arguments)
        if case .enroll = action {
            for option in ["share", "object"] where arguments.value(option) != nil {
                throw UsageError("'--\(option)' does not go with enroll")
            }
            cars = []
            existingPins = try PairedCars.read(PairedCar.path(forKey: keyPath))
            expectedVehicleID = vehicle
            expectedCarKey = carKey
        } else {
            var scanning = false
            if case .ble(_, .scan) = transport { scanning = true }
            cars = try PairedCars.resolve(carKey: carKey, vehicleID: vehicle, keyPath: keyPath, scanning: scanning)
            existingPins = PairedCars()
            expectedVehicleID = nil
            expectedCarKey = nil
        }
        shareCertificate = try Self.shareCertificate(arguments)

        let encodingName = arguments.value("encoding") ?? "der"
        guard let encoding = SignatureEncoding(rawValue: encodingName) else {
            throw UsageError.invalidValue(encodingName, for: "--encoding", expected: "der or raw")
        }
        self.encoding = encoding
        json = arguments.flag("json")

        let seconds = try arguments.integer("timeout") ?? 5
        guard (1...300).contains(seconds) else {
            throw UsageError.invalidValue("\(seconds)", for: "--timeout", expected: "1 to 300 seconds")
        }
        timeoutMillis = UInt64(seconds) * 1000

        if arguments.flag("uwb") {
            guard case .command = action else { throw UsageError("'--uwb' goes with a command, not enroll") }
            let interval = try arguments.integer("uwb-interval") ?? 50
            guard RangingSetup.roundIntervals.contains(UInt16(clamping: interval)), interval >= 0 else {
                throw UsageError.invalidValue("\(interval)", for: "--uwb-interval", expected: "50 to 1000 milliseconds")
            }
            let wait = try arguments.integer("uwb-wait") ?? 400
            guard (0...10_000).contains(wait) else {
                throw UsageError.invalidValue("\(wait)", for: "--uwb-wait", expected: "0 to 10000 milliseconds")
            }
            uwb = (UInt16(interval), UInt64(wait))
        } else {
            for option in ["uwb-interval", "uwb-wait"] where arguments.value(option) != nil {
                throw UsageError("'--\(option)' goes with --uwb")
            }
            uwb = nil
        }

        if let name = arguments.value("misbehave") {
            guard let mode = Misbehaviour(rawValue: name) else {
                throw UsageError.invalidValue(name, for: "--misbehave", expected: Misbehaviour.names)
            }
            guard case .command = action else { throw UsageError("'--misbehave' goes with a command, not enroll") }
            guard uwb == nil else { throw UsageError("'--misbehave' and '--uwb' exclude each other") }
            misbehaviour = mode
        } else {
            misbehaviour = nil
        }
        let delay = try arguments.integer("misbehave-delay") ?? Int(Misbehaviour.defaultDelayMillis)
        guard (0...120_000).contains(delay) else {
            throw UsageError.invalidValue("\(delay)", for: "--misbehave-delay", expected: "0 to 120000 milliseconds")
        }
        if arguments.value("misbehave-delay") != nil, misbehaviour != .lateAuth {
            throw UsageError("'--misbehave-delay' goes with --misbehave late-auth")
        }
        misbehaveDelayMillis = UInt64(delay)
    }

    private static func privateKey(at path: String) throws -> P256PrivateKey {
        let pem: String
        do {
            pem = String(decoding: try Files.read(path, limit: 64 * 1024), as: UTF8.self)
        } catch {
            throw UsageError("cannot read '\(path)' for '--key': \(error)")
        }
        guard let key = try? P256PrivateKey(pemRepresentation: pem) else {
            throw UsageError("'\(path)' for '--key' holds no unencrypted PKCS#8 P-256 private key")
        }
        return key
    }

    private static func action(_ arguments: ParsedArguments) throws -> Action {
        let name = arguments.argument("command") ?? ""
        if name == "enroll" {
            guard arguments.value("object") == nil else { throw UsageError("'--object' goes with revoke, not enroll") }
            let text = try arguments.require("code")
            do { return .enroll(try PairingCode(text)) } catch {
                throw UsageError.invalidValue(HexArguments.abbreviate(text), for: "--code", expected: "the 6 digits the car showed")
            }
        }
        guard arguments.value("code") == nil else { throw UsageError("'--code' goes with enroll") }
        // Also by their protocol names, e.g. userVerified.
        guard let command = commandNames.first(where: { $0.0 == name || $0.1.name == name })?.1 else {
            throw UsageError.invalidValue(name, for: "<command>", expected: actionNamesForHelp)
        }
        guard command == .revoke else {
            guard arguments.value("object") == nil else { throw UsageError("'--object' goes with revoke") }
            return .command(command, args: [])
        }
        return .command(.revoke, args: try revocationObject(arguments))
    }

    /// The signed revocation file for revoke (as `carkey revoke` wrote it), checked to decode.
    private static func revocationObject(_ arguments: ParsedArguments) throws -> Bytes {
        let path = try arguments.require("object")
        let bytes: Bytes
        do { bytes = try Files.read(path, limit: 4096) } catch { throw UsageError("cannot read '\(path)' for '--object': \(error)") }
        do throws(MessageFormatError) { _ = try Revocation.decode(bytes) } catch {
            throw UsageError("'\(path)' for '--object' is not a revocation: \(error)")
        }
        return bytes
    }

    private static func shareCertificate(_ arguments: ParsedArguments) throws -> Bytes {
        guard let path = arguments.value("share") else { return [] }
        let bytes: Bytes
        do { bytes = try Files.read(path, limit: 4096) } catch { throw UsageError("cannot read '\(path)' for '--share': \(error)") }
        do throws(MessageFormatError) { _ = try ShareCertificate.decode(bytes) } catch {
            throw UsageError("'\(path)' for '--share' is not a share certificate: \(error)")
        }
        return bytes
    }

    private static func carKey(_ arguments: ParsedArguments) throws -> P256PublicKey? {
        guard let text = arguments.value("car-key") else { return nil }
        do {
            return try HexArguments.publicKey(text, option: "car-key")
        } catch let error as UsageError {
            throw error
        } catch {
            throw UsageError("'--car-key' is not a valid P-256 public key: \(error)")
        }
    }

    private static func vehicleID(_ arguments: ParsedArguments) throws -> VehicleID? {
        guard let text = arguments.value("vehicle") else { return nil }
        do { return try VehicleID(text) } catch {
            throw UsageError.invalidValue(HexArguments.abbreviate(text), for: "--vehicle", expected: "1 to 32 printable ASCII characters")
        }
    }
}
