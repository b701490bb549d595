// `carkey config sign`: a fleet back end (or an owner with the manage permission) signs a
// configuration document for one car (docs/cloud.md "Configuration (desired/reported)").
// Prints the document (and writes it with --out); --envelope prints the MQTT envelope for
// vehicles/{id}/config/desired. A document is the complete desired state of the managed keys,
// so the signer is told on stderr which managed settings it sets back to their defaults.
import CommandLineKit
import Drivers
import Protocol

extension Command {
    static let config = Command(
        name: "config",
        summary: "Signed configuration documents for the cloud's config/desired topic",
        subcommands: [configSign]
    )

    static let configSign = Command(
        name: "sign",
        summary: "Sign a configuration document with a fleet or owner key (exit 0 written, 2 usage)",
        discussion: """
            --in is a JSON object with the cloud-managed keys of agent.json only (logLevel,
            mqtt.keepaliveSeconds, mqtt.willDelaySeconds, proximity, audit, link.maxLinks,
            link.idleTimeoutSeconds, link.identifierRotationMinutes, remote.allowUnlock,
            remote.autoRelockSeconds); the car refuses a document
            that names any other key. The document is the complete desired state of those keys:
            each one it leaves out goes back to its default on the car (a {"logLevel": ...}
            document turns remote.allowUnlock off again), and a note on stderr lists them. The
            version must be higher than the last one the car handled. Prints 'version N',
            'expires-at SECONDS' and 'document HEX', or one JSON object with --json; --envelope
            prints the envelope JSON for mosquitto_pub instead. --out also writes the binary
            document to a file.
            """,
        options: [
            .value("key", placeholder: "KEYFILE", help: "The fleet or owner private key (PKCS#8 PEM)"),
            .value("vehicle", placeholder: "ID", help: "The car's vehicle ID"),
            .value("version", placeholder: "N", help: "The document version (1 or more, higher than the last)"),
            .value("expires-in", placeholder: "SECONDS", help: "Lifetime from now (default 86400, at most 30 days)"),
            .value("in", placeholder: "FILE", help: "The configuration JSON"),
            .value("out", short: "o", placeholder: "FILE", help: "Also write the signed document (binary) to FILE"),
            .flag("force", help: "Replace an existing file"),
            .flag("json", help: "Print the result as one JSON object"),
            .flag("envelope", help: "Print the MQTT envelope {\"id\",\"type\":\"config\",\"body\"} instead"),
        ],
        exitStatuses: [
            ExitStatus(0, "signed and printed (and written with --out)"),
            ExitStatus(1, "not written (an existing --out without --force, I/O): the reason on stderr"),
        ],
        action: { invocation in
            let arguments = invocation.arguments
            let key = try OwnerKeyFile.load(try arguments.require("key"))
            let vehicleID = try KeyToolArguments.vehicleID(arguments)
            let versionText = try arguments.require("version")
            guard let version = UInt64(versionText), version >= 1 else {
                throw UsageError.invalidValue(versionText, for: "--version", expected: "an integer of at least 1")
            }
            let lifetimeText = arguments.value("expires-in") ?? "86400"
            guard let lifetime = UInt32(lifetimeText), lifetime >= 1, lifetime <= SignedConfig.maxLifetimeSeconds else {
                throw UsageError.invalidValue(lifetimeText, for: "--expires-in", expected: "1 to \(SignedConfig.maxLifetimeSeconds) seconds")
            }
            let inPath = try arguments.require("in")
            let payload: [UInt8]
            do { payload = try Files.read(inPath, limit: SignedConfig.maxPayloadLength) } catch {
                throw UsageError("cannot read '\(inPath)' for '--in': \(error)")
            }
            guard case .success(let tree) = JSONTree.decode(payload), case .object = tree else {
                throw UsageError("'--in' must hold one JSON object")
            }
            let issuedAt = UInt32(clamping: KeyToolArguments.currentTime())
            let document: SignedConfig
            do {
                document = try SignedConfig.issue(by: key, vehicleID: vehicleID, version: version, issuedAt: issuedAt,
                                                  expiresAt: issuedAt &+ lifetime, payload: payload)
            } catch let error as KeyObjectError {
                throw ToolFailure("cannot sign the document: \(error)")
            }
            let encoded = document.encoded()
            if let path = arguments.value("out") {
                try KeyToolArguments.write(encoded, to: path, force: arguments.flag("force"))
            } else if arguments.flag("force") {
                throw UsageError("'--force' needs '--out FILE'")
            }
            let reset = ManagedConfigKeys.reset(byDocumentWith: ConfigDocumentKeys.leaves(tree))
            if !reset.isEmpty {
                writeStderr("carkey: note: the car sets the managed settings this document leaves out back to their defaults: "
                            + reset.joined(separator: ", ") + "\n")
            }
            if arguments.flag("envelope") {
                print(JSONValue.object([("id", .string(try UUIDv4.make())), ("type", .string("config")),
                                        ("body", .string(encoded.hexString))]).serialized)
            } else if arguments.flag("json") {
                print(JSONValue.object([("version", .integer(Int64(clamping: version))), ("expiresAt", .integer(Int64(document.expiresAt))),
                                        ("signer", .string(document.signerKeyID.description)), ("document", .string(encoded.hexString))]).serialized)
            } else {
                print("version \(version)")
                print("expires-at \(document.expiresAt)")
                print("document \(encoded.hexString)")
            }
            return 0
        }
    )
}

/// The dotted leaf keys of a configuration document ("proximity.walkAwaySeconds"); an empty
/// object counts as a leaf.
enum ConfigDocumentKeys {
    static func leaves(_ tree: JSONTree, prefix: String = "") -> [String] {
        guard case .object(let fields) = tree, !fields.isEmpty else { return prefix.isEmpty ? [] : [prefix] }
        return fields.keys.sorted().flatMap { leaves(fields[$0]!, prefix: prefix.isEmpty ? $0 : prefix + "." + $0) }
    }
}
