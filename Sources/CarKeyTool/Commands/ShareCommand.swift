// `carkey share`: an owner signs a share certificate for another phone's key
// (docs/protocol.md section 18.3). Writes the binary certificate; prints serial and hex.
import CommandLineKit
import Drivers
import Protocol

#if canImport(Glibc)
import Glibc
#endif

extension Command {
    static let share = Command(
        name: "share",
        summary: "Sign a share certificate for a phone key with an owner key (exit 0 written, 2 usage)",
        discussion: """
            The holder presents the certificate in its Hello; the car checks it offline and then
            remembers the key. Times are ISO 8601 in UTC (YYYY-MM-DDTHH:MM:SSZ) or with an
            offset (+hh:mm). Without --not-before the share is valid at once. Prints
            'serial HEX', 'holder-key-id HEX' and 'certificate HEX', or one JSON object with
            --json. The serial is what `carkey revoke --serial` takes.
            """,
        options: [
            .value("key", aliases: ["owner"], placeholder: "KEYFILE", help: "The owner's private key that signs (PKCS#8 PEM, as `carkey keygen` writes)"),
            .value("holder", placeholder: "PUBHEX|@PEMFILE", help: "The holder phone's public key (65 bytes SEC1 hex)"),
            .value("vehicle", placeholder: "ID", help: "The car's vehicle ID (1 to 32 printable ASCII characters)"),
            .value("permissions", placeholder: "LEVEL", help: "full, unlock-only, trunk-only or lock-only"),
            .value("not-after", placeholder: "ISO8601", help: "End of validity"),
            .value("not-before", placeholder: "ISO8601", help: "Start of validity (default: none)"),
            .value("out", short: "o", placeholder: "FILE", help: "Where to write the certificate (binary)"),
            .flag("force", help: "Replace an existing file"),
            .flag("json", help: "Print one JSON object: serial, holderKeyID, vehicle, permissions, notBefore, notAfter, certificate, out"),
        ],
        exitStatuses: [
            ExitStatus(0, "signed and written"),
            ExitStatus(1, "not written (an existing --out without --force, I/O): the reason on stderr"),
        ],
        action: { invocation in
            let arguments = invocation.arguments
            let owner = try OwnerKeyFile.load(try arguments.require("key"))
            let holder: P256PublicKey
            do {
                holder = try HexArguments.publicKey(try arguments.require("holder"), option: "holder")
            } catch let error as CryptoError {
                throw UsageError("'--holder' is not a valid P-256 public key: \(error)")
            }
            let vehicleID = try KeyToolArguments.vehicleID(arguments)
            let levelName = try arguments.require("permissions")
            guard let level = PermissionLevel(name: levelName) else {
                throw UsageError.invalidValue(levelName, for: "--permissions", expected: PermissionLevel.namesForHelp)
            }
            let notAfter = try KeyToolArguments.time(arguments, "not-after")
            let notBefore = try arguments.value("not-before").map { _ in try KeyToolArguments.time(arguments, "not-before") } ?? 0
            guard notBefore < notAfter else { throw UsageError("'--not-after' must be later than '--not-before'") }
            guard Int64(notAfter) > KeyToolArguments.currentTime() else { throw UsageError("'--not-after' is in the past") }
            let path = try arguments.require("out")

            let certificate: ShareCertificate
            do {
                certificate = try ShareCertificate.issue(by: owner, holder: holder, vehicleID: vehicleID,
                                                         permissions: level.permissions, notBefore: notBefore,
                                                         notAfter: notAfter, serial: ShareSerial.random(SystemRandom()))
            } catch let error as KeyObjectError {
                throw ToolFailure("cannot sign the certificate: \(error)")
            }
            try KeyToolArguments.write(certificate.encoded(), to: path, force: arguments.flag("force"))
            if arguments.flag("json") {
                print(JSONValue.object([
                    ("serial", .string(certificate.serial.description)), ("holderKeyID", .string(certificate.holderKeyID.description)),
                    ("vehicle", .string(vehicleID.description)), ("permissions", .string(levelName)),
                    ("notBefore", notBefore == 0 ? .null : .string(ISO8601.format(Int64(notBefore)))),
                    ("notAfter", .string(ISO8601.format(Int64(notAfter)))),
                    ("certificate", .string(certificate.encoded().hexString)), ("out", .string(path)),
                ]).serialized)
                return 0
            }
            print("serial \(certificate.serial)")
            print("holder-key-id \(certificate.holderKeyID)")
            print("certificate \(certificate.encoded().hexString)")
            return 0
        }
    )
}

/// The signing key file (--key) for `share`, `revoke`, `config sign`, `command` and `service sign`.
enum OwnerKeyFile {
    static func load(_ path: String) throws -> P256PrivateKey {
        let pem: String
        do {
            pem = String(decoding: try Files.read(path, limit: 64 * 1024), as: UTF8.self)
        } catch {
            throw UsageError("cannot read '\(path)' for '--key': \(error)")
        }
        guard let key = try? P256PrivateKey(pemRepresentation: pem) else {
            throw UsageError("'\(path)' for '--key' holds no unencrypted PEM P-256 private key")
        }
        return key
    }
}

/// Option parsing shared by `share` and `revoke`; every error names its option.
enum KeyToolArguments {
    static func vehicleID(_ arguments: ParsedArguments) throws -> VehicleID {
        let text = try arguments.require("vehicle")
        do {
            return try VehicleID(text)
        } catch {
            throw UsageError.invalidValue(HexArguments.abbreviate(text), for: "--vehicle", expected: "1 to 32 printable ASCII characters")
        }
    }

    /// An ISO 8601 time as UInt32 seconds; 0xFFFFFFFF is reserved for "no upper bound".
    static func time(_ arguments: ParsedArguments, _ name: String) throws -> UInt32 {
        let text = try arguments.require(name)
        let seconds: Int64
        do {
            seconds = try ISO8601.parse(text)
        } catch {
            throw UsageError("invalid value '\(HexArguments.abbreviate(text))' for '--\(name)': \(error)")
        }
        guard seconds >= 0, seconds < Int64(UInt32.max) else {
            throw UsageError("'--\(name)' must be between 1970-01-01T00:00:00Z and 2106-02-07T06:28:14Z")
        }
        return UInt32(seconds)
    }

    static func currentTime() -> Int64 {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Int64(spec.tv_sec)
    }

    static func write(_ bytes: Bytes, to path: String, force: Bool) throws {
        do {
            try Files.writeAtomically(bytes, to: path, mode: 0o644, exclusive: !force)
        } catch let error as Errno {
            throw OutputFile.failure(path, error)
        }
    }
}
