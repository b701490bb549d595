// `carkey keygen --out FILE`: a new P-256 key as PKCS#8 PEM (0600); prints the public key.
import CommandLineKit
import Drivers
import Protocol

extension Command {
    static let keygen = Command(
        name: "keygen",
        summary: "Generate a P-256 key (PKCS#8 PEM, mode 0600) and print its public key",
        discussion: "Refuses to overwrite an existing file unless --force is given. Prints the SEC1 "
            + "uncompressed public key (65 bytes) as hex on stdout.",
        options: [
            .value("out", short: "o", placeholder: "FILE", help: "Where to write the private key"),
            .flag("force", help: "Replace an existing file"),
            .flag("json", help: "Print one JSON object: publicKey (SEC1 hex), keyID, out"),
        ],
        exitStatuses: [
            ExitStatus(0, "written; the public key printed"),
            ExitStatus(1, "not written (an existing --out without --force, I/O): the reason on stderr"),
        ],
        action: { invocation in
            let path = try invocation.arguments.require("out")
            let key = try P256PrivateKey.generate()
            let pem = try key.pemRepresentation()
            do {
                try Files.writeAtomically(Bytes(pem.utf8), to: path, mode: 0o600,
                                          exclusive: !invocation.arguments.flag("force"))
            } catch let error as Errno {
                throw OutputFile.failure(path, error)
            }
            if invocation.arguments.flag("json") {
                print(JSONValue.object([("publicKey", .string(key.publicKey.sec1.hexString)),
                                        ("keyID", .string(KeyID(publicKey: key.publicKey).description)), ("out", .string(path))]).serialized)
            } else {
                print(key.publicKey.sec1.hexString)
            }
            return 0
        }
    )
}
