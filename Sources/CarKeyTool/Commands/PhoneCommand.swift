// `carkey phone`: the phone simulator. Handshake, one command, result and timings.
import CommandLineKit
import Protocol

extension Command {
    static let phone = Command(
        name: "phone",
        summary: "Act as a phone: handshake with a car over the simulated link and send one command",
        discussion: """
            Connects to a car (`carkey-agent run --simulate`), runs the handshake with the
            reference phone state machine, sends one command and prints the result: `ok` or
            `fault: NAME (CODE)`, then the vehicle state, the key's role and permissions, and
            the handshake and command times in milliseconds. The Challenge is verified against
            --car-key and --vehicle before anything is signed. Exit 0 only for an ok result;
            1 for a fault, a refusal or a link failure (every wait is bounded by --timeout).
            Commands: unlock, lock, trunk, status, user-verified.
            """,
        options: [
            .value("key", placeholder: "FILE", help: "The phone's private key (PKCS#8 PEM, from carkey keygen)"),
            .value("connect", placeholder: "unix:PATH", help: "The car's simulated link socket"),
            .value("car-key", placeholder: "HEX|@PEMFILE", help: "The car identity public key to pin (e.g. @DIR/car-identity.pub)"),
            .value("vehicle", placeholder: "ID", help: "The vehicle ID the car must present"),
            .value("encoding", placeholder: "der|raw", help: "AuthResponse signature encoding (default der)"),
            .value("timeout", placeholder: "SECONDS", help: "Bound on each wait for the car (default 5)"),
        ],
        arguments: [Positional("command", help: "unlock, lock, trunk, status or user-verified")],
        action: { invocation in
            let options = try PhoneOptions(invocation.arguments)
            let outcome = try PhoneExchange(options: options).run()
            return PhoneReport.print(outcome, command: options.command)
        }
    )
}
