// `carkey revoke`: an owner signs a revocation of a share (by serial) or of a key (by key ID or
// public key) for one car (docs/protocol.md section 18.4). Writes the binary revocation.
import CommandLineKit
import Protocol

extension Command {
    static let revoke = Command(
        name: "revoke",
        summary: "Sign a revocation of a share or key with an owner key (exit 0 written, 2 usage)",
        discussion: """
            Give exactly one of --serial (a share, as `carkey share` printed it), --key-id
            (8 bytes hex) or --key (the phone's public key). The car applies it when an owner's
            phone sends it (command revoke) or when the cloud delivers it, and ends the
            affected sessions at once. Prints 'target KIND HEX' and 'revocation HEX'.
            """,
        options: [
            .value("owner", placeholder: "KEYFILE", help: "The owner's private key (PKCS#8 PEM)"),
            .value("vehicle", placeholder: "ID", help: "The car's vehicle ID"),
            .value("serial", placeholder: "HEX", help: "Revoke the share with this serial (8 bytes)"),
            .value("key-id", placeholder: "HEX", help: "Revoke the key with this key ID (8 bytes)"),
            .value("key", placeholder: "PUBHEX|@PEMFILE", help: "Revoke this public key"),
            .value("issued-at", placeholder: "ISO8601", help: "Issue time (default: now)"),
            .value("out", short: "o", placeholder: "FILE", help: "Where to write the revocation (binary)"),
            .flag("force", help: "Replace an existing file"),
        ],
        action: { invocation in
            let arguments = invocation.arguments
            let owner = try OwnerKeyFile.load(try arguments.require("owner"))
            let vehicleID = try KeyToolArguments.vehicleID(arguments)
            let target = try RevokeTarget.parse(arguments)
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
            switch target {
            case .serial(let serial): print("target serial \(serial)")
            case .key(let keyID): print("target key-id \(keyID)")
            }
            print("revocation \(revocation.encoded().hexString)")
            return 0
        }
    )
}

enum RevokeTarget {
    static func parse(_ arguments: ParsedArguments) throws -> RevocationTarget {
        let given = ["serial", "key-id", "key"].filter { arguments.value($0) != nil }
        guard given.count == 1 else {
            throw UsageError(given.isEmpty ? "missing target: give one of '--serial', '--key-id' or '--key'"
                                           : "give only one of '--serial', '--key-id' or '--key'")
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
            do {
                return .key(KeyID(publicKey: try HexArguments.publicKey(try arguments.require("key"), option: "key")))
            } catch let error as CryptoError {
                throw UsageError("'--key' is not a valid P-256 public key: \(error)")
            }
        }
    }
}
