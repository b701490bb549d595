// `carkey revoke`: an owner signs a revocation of a share (by serial) or of a key (by key ID or
// public key) for one car (docs/protocol.md section 18.4). Writes the binary revocation.
import CommandLineKit
import Drivers
import Protocol

extension Command {
    static let revoke = Command(
        name: "revoke",
        summary: "Sign a revocation of a share or key with an owner key (exit 0 written, 2 usage)",
        discussion: """
            --key is the owner's private key that signs. Give exactly one target: --serial (a
            share, as `carkey share` printed it), --key-id (8 bytes hex) or --public-key (the
            phone's public key). The car applies it when an owner's phone sends it (command
            revoke) or when the cloud delivers it, and ends the affected sessions at once. Prints
            'target KIND HEX' and 'revocation HEX', or one JSON object with --json.

            Old spellings, accepted for this release: --owner for the signing key; in a command
            line with --owner, --key keeps its old meaning, the public key to revoke.
            """,
        options: [
            .value("key", placeholder: "KEYFILE", help: "The owner's private key that signs (PKCS#8 PEM)"),
            .value("vehicle", placeholder: "ID", help: "The car's vehicle ID"),
            .value("serial", placeholder: "HEX", help: "Revoke the share with this serial (8 bytes)"),
            .value("key-id", placeholder: "HEX", help: "Revoke the key with this key ID (8 bytes)"),
            .value("public-key", placeholder: "PUBHEX|@PEMFILE", help: "Revoke this public key"),
            .value("issued-at", placeholder: "ISO8601", help: "Issue time (default: now)"),
            .value("out", short: "o", placeholder: "FILE", help: "Where to write the revocation (binary)"),
            .flag("force", help: "Replace an existing file"),
            .flag("json", help: "Print one JSON object: target (kind, value), vehicle, issuedAt, revocation, out"),
            .value("owner", placeholder: "KEYFILE",
                   help: "Old spelling of --key, accepted for this release; with it, --key is the old spelling of --public-key"),
        ],
        exitStatuses: [
            ExitStatus(0, "signed and written"),
            ExitStatus(1, "not written (an existing --out without --force, I/O): the reason on stderr"),
        ],
        action: { invocation in
            let arguments = invocation.arguments
            let (signerPath, oldTargetKey) = try RevokeTarget.signer(arguments)
            let owner = try OwnerKeyFile.load(signerPath)
            let vehicleID = try KeyToolArguments.vehicleID(arguments)
            let target = try RevokeTarget.parse(arguments, publicKey: oldTargetKey.map { ($0, "key") }
                                                    ?? arguments.value("public-key").map { ($0, "public-key") })
            let issuedAt = try arguments.value("issued-at").map { _ in try KeyToolArguments.time(arguments, "issued-at") }
                ?? UInt32(clamping: KeyToolArguments.currentTime())
            let path = try arguments.require("out")
            let revocation: Revocation
            do {
                revocation = try Revocation.issue(by: owner, vehicleID: vehicleID, target: target, issuedAt: issuedAt)
            } catch let error as KeyObjectError {
                throw ToolFailure("cannot sign the revocation: \(error)")
            }
            try KeyToolArguments.write(revocation.encoded(), to: path, force: arguments.flag("force"))
            let (kind, value): (String, String)
            switch target {
            case .serial(let serial): (kind, value) = ("serial", serial.description)
            case .key(let keyID): (kind, value) = ("key-id", keyID.description)
            }
            if arguments.flag("json") {
                print(JSONValue.object([
                    ("target", .object([("kind", .string(kind)), ("value", .string(value))])), ("vehicle", .string(vehicleID.description)),
                    ("issuedAt", .string(ISO8601.format(Int64(issuedAt)))), ("revocation", .string(revocation.encoded().hexString)),
                    ("out", .string(path)),
                ]).serialized)
                return 0
            }
            print("target \(kind) \(value)")
            print("revocation \(revocation.encoded().hexString)")
            return 0
        }
    )
}

enum RevokeTarget {
    /// The signing key's path, and the target public key an old command line gave as --key
    /// (`--owner FILE --key PUBHEX`, the spelling before --key meant the signer everywhere).
    static func signer(_ arguments: ParsedArguments) throws -> (path: String, oldTargetKey: String?) {
        guard let owner = arguments.value("owner") else { return (try arguments.require("key"), nil) }
        guard let old = arguments.value("key") else { return (owner, nil) }
        guard arguments.value("public-key") == nil else {
            throw UsageError("with '--owner', '--key' is the old spelling of '--public-key': give only one of them")
        }
        return (owner, old)
    }

    /// `publicKey`: the target key's text and the option it came with (for messages).
    static func parse(_ arguments: ParsedArguments, publicKey: (text: String, option: String)?) throws -> RevocationTarget {
        var given = ["serial", "key-id"].filter { arguments.value($0) != nil }
        if publicKey != nil { given.append("public-key") }
        guard given.count == 1 else {
            throw UsageError(given.isEmpty ? "missing target: give one of '--serial', '--key-id' or '--public-key'"
                                           : "give only one of '--serial', '--key-id' or '--public-key'")
        }
        switch given[0] {
        case "serial":
            let bytes = try HexArguments.bytes(arguments, "serial")
            guard let serial = try? ShareSerial(bytes: bytes) else { throw UsageError("'--serial' must be 8 bytes, got \(bytes.count)") }
            return .serial(serial)
        case "key-id":
            let bytes = try HexArguments.bytes(arguments, "key-id")
            guard let keyID = try? KeyID(bytes: bytes) else { throw UsageError("'--key-id' must be 8 bytes, got \(bytes.count)") }
            return .key(keyID)
        default:
            let option = publicKey?.option ?? "public-key"
            do {
                return .key(KeyID(publicKey: try HexArguments.publicKey(publicKey?.text ?? "", option: option)))
            } catch let error as CryptoError {
                throw UsageError("'--\(option)' is not a valid P-256 public key: \(error)")
            }
        }
    }
}
