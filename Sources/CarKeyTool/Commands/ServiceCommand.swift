// `carkey service sign`: the field engineer's half of service-mode authorisation
// (docs/operations.md "Service mode", docs/protocol.md 18.13). The car's console shows a
// challenge; this signs it with an owner key (manage permission) or a fleet key and prints the
// answer to paste back as `service auth ANSWER`. The car decides everything (its own deadline,
// the key's standing); the checks here only catch a wrong paste early.
import CommandLineKit
import Drivers
import Protocol
#if canImport(Glibc)
import Glibc
#endif

extension Command {
    static let service = Command(
        name: "service",
        summary: "Authorise service mode on a car's serial console",
        subcommands: [.serviceSign]
    )

    static let serviceSign = Command(
        name: "sign",
        summary: "Sign the challenge a car's console showed (exit 0, 1 refused, 2 usage)",
        discussion: """
            Prints the answer (hex) on standard output; paste it on the console as
            `service auth ANSWER`. With --vehicle, refuses a challenge from another car. The
            challenge's expiry is the car's clock: a challenge that looks expired here is still
            signed (with a warning), because the car checks its own deadline.
            """,
        options: [
            .value("key", placeholder: "KEYFILE", help: "An owner key with manage, or a fleet key (PKCS#8 PEM)"),
            .value("challenge", placeholder: "HEX", help: "The challenge as the console printed it"),
            .value("vehicle", placeholder: "ID", help: "The car you mean to authorise (checked against the challenge)"),
            .flag("json", help: "Print a JSON object with the challenge's fields and the answer"),
        ],
        exitStatuses: [
            ExitStatus(0, "signed; the answer printed"),
            ExitStatus(1, "not signed: not a service challenge, or from another vehicle than --vehicle"),
        ],
        action: { invocation in
            let arguments = invocation.arguments
            let key = try OwnerKeyFile.load(try arguments.require("key"))
            let text = try arguments.require("challenge")
            guard let bytes = Bytes(hex: text) else { throw UsageError("'--challenge' is not hex: copy the whole line the console printed") }
            let challenge: ServiceChallenge
            do { challenge = try ServiceChallenge.decode(bytes) } catch {
                throw ToolFailure("not a service challenge: \(error)")
            }
            if arguments.value("vehicle") != nil {
                let expected = try KeyToolArguments.vehicleID(arguments)
                guard expected == challenge.vehicleID else {
                    throw ToolFailure("the challenge is from vehicle \(challenge.vehicleID), not \(expected): not signed")
                }
            }
            let now = KeyToolArguments.currentTime()
            if Int64(challenge.expiresAt) <= Int64(now) {
                writeStderr("carkey: warning: by this computer's clock the challenge expired "
                      + "\(Int64(now) - Int64(challenge.expiresAt)) s ago; the car decides on its own clock\n")
            }
            let answer: ServiceAuthorisation
            do { answer = try ServiceAuthorisation.sign(challenge, by: key) } catch {
                throw ToolFailure("cannot sign the challenge: \(error)")
            }
            let hex = answer.encoded().hexString
            if arguments.flag("json") {
                print(#"{"vehicle":"\#(challenge.vehicleID)","nonce":"\#(challenge.nonce.hexString)","issuedAt":\#(challenge.issuedAt),"expiresAt":\#(challenge.expiresAt),"signer":"\#(answer.signerKeyID)","answer":"\#(hex)"}"#)
            } else {
                print(hex)
            }
            return 0
        }
    )
}
