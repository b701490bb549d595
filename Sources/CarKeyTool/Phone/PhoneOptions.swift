// `carkey phone` arguments, validated into typed values (usage errors name the option).
import CommandLineKit
import Drivers
import Protocol

struct PhoneOptions {
    static let commandNames: [(String, CommandCode)] = [
        ("unlock", .unlock), ("lock", .lock), ("trunk", .trunkRelease), ("status", .status), ("user-verified", .userVerified),
    ]

    let key: P256PrivateKey
    let socketPath: String
    let carKey: P256PublicKey
    let vehicleID: VehicleID
    let encoding: SignatureEncoding
    let timeoutMillis: UInt64
    let command: CommandCode

    init(_ arguments: ParsedArguments) throws {
        let keyPath = try arguments.require("key")
        let pem: String
        do {
            pem = String(decoding: try Files.read(keyPath, limit: 64 * 1024), as: UTF8.self)
        } catch {
            throw UsageError("cannot read '\(keyPath)' for '--key': \(error)")
        }
        guard let key = try? P256PrivateKey(pemRepresentation: pem) else {
            throw UsageError("'\(keyPath)' for '--key' holds no unencrypted PKCS#8 P-256 private key")
        }
        self.key = key

        let connect = try arguments.require("connect")
        guard connect.hasPrefix("unix:"), connect.count > 5 else {
            throw UsageError.invalidValue(connect, for: "--connect", expected: "unix:PATH")
        }
        socketPath = String(connect.dropFirst(5))

        do {
            carKey = try HexArguments.publicKey(try arguments.require("car-key"), option: "car-key")
        } catch let error as UsageError {
            throw error
        } catch {
            throw UsageError("'--car-key' is not a valid P-256 public key: \(error)")
        }

        let vehicle = try arguments.require("vehicle")
        do { vehicleID = try VehicleID(vehicle) } catch {
            throw UsageError.invalidValue(vehicle, for: "--vehicle", expected: "1 to 32 printable ASCII characters")
        }

        let encodingName = arguments.value("encoding") ?? "der"
        guard let encoding = SignatureEncoding(rawValue: encodingName) else {
            throw UsageError.invalidValue(encodingName, for: "--encoding", expected: "der or raw")
        }
        self.encoding = encoding

        let seconds = try arguments.integer("timeout") ?? 5
        guard (1...300).contains(seconds) else {
            throw UsageError.invalidValue("\(seconds)", for: "--timeout", expected: "1 to 300 seconds")
        }
        timeoutMillis = UInt64(seconds) * 1000

        let name = arguments.argument("command") ?? ""
        // The five v1 commands only (also by their protocol names, e.g. userVerified); other
        // codes such as revoke carry arguments this simulator does not build.
        guard let command = Self.commandNames.first(where: { $0.0 == name || $0.1.name == name })?.1 else {
            throw UsageError.invalidValue(name, for: "<command>", expected: Self.commandNames.map(\.0).joined(separator: ", "))
        }
        self.command = command
    }
}
