// `carkey phone`: the phone simulator. Enroll with a pairing code, or handshake and send one
// command (optionally presenting a share certificate), with the result and timings.
import CommandLineKit
import Protocol

extension Command {
    static let phone = Command(
        name: "phone",
        summary: "Act as a phone: enroll with a pairing code, or handshake and send one command",
        discussion: """
            Connects to a car over its simulated link (`--connect unix:DIR/ble.sock`, from
            `carkey-agent run --simulate`) or over Bluetooth LE through BlueZ (`--ble hci1` with
            `--car AA:BB:CC:DD:EE:FF` or `--scan`; root or CAP_NET_ADMIN/CAP_NET_RAW; stop
            bluetoothd on this machine too, it competes for discovery). --scan looks for the
            key service; after enrollment the car's advertising key (in KEYFILE.car) picks out
            your car by its rotating identifier. Over BLE the tool discovers the key service,
            subscribes to the car-to-phone characteristic and fragments messages over the ATT
            MTU (docs/protocol.md, "Bluetooth LE transport").

            enroll --code NNNNNN: owner enrollment with the code the car shows (`carkey-agent
            pair`). On success prints 'enrolled' and saves the car's proven identity key and
            vehicle ID beside the phone key as KEYFILE.car (mode 0600); later commands pin
            them without --car-key and --vehicle. --vehicle and --car-key, if given, must match.
            KEYFILE.car holds one pin per vehicle ID: enrolling the same key with another car
            adds that car and keeps the others. With several pinned, the car's Challenge says
            which one answers (its signature must verify under that car's pin); --vehicle picks
            one, and a --ble --scan needs it.

            unlock, lock, trunk, status, user-verified: runs the handshake with the reference
            phone state machine, sends the command and prints the result: `ok` or
            `fault: NAME (CODE)`, then the vehicle state, the key's role and permissions, and
            the handshake and command times in milliseconds. The Challenge is verified against
            the pinned car key and vehicle ID before anything is signed. --share CERTFILE
            presents a share certificate (`carkey share`) in the Hello: the holder's first use,
            after which the car remembers the key.

            revoke --object FILE: sends the signed revocation `carkey revoke` wrote (command
            0x06; the session key needs manage, so an owner's). The car ends the affected
            sessions at once.

            Testing aids for app teams and car conformance reports (`carkey-agent run
            --conformance`, docs/phone-app.md): --misbehave MODE breaks one rule of
            docs/protocol.md on purpose and prints the car's answer first, then
            'misbehaviour: MODE' and what was done. Modes: late-auth (the AuthResponse after
            --misbehave-delay MS, default 10500: rule A3, or the car's handshake deadline),
            replay-counter (a Command sent twice: S4), counter-gap (the first Command with
            counter 3: phone rule 12.4), bad-fragment (a frame or fragment outside the
            framing: section 16), hello-storm (8 Hellos back to back: H6, H1a),
            command-before-session (R2), auth-before-hello (A1), stale-timestamp (the
            timestamp an hour behind: A5 on a car with trusted time), double-command (a
            second Command before the first Response: S6), expired-command (S9).
            """,
        options: [
            .value("key", placeholder: "FILE", help: "The phone's private key (PKCS#8 PEM, from carkey keygen)"),
            .value("car-key", placeholder: "HEX|@PEMFILE", help: "The car identity public key to pin (default: from KEYFILE.car)"),
            .value("vehicle", placeholder: "ID", help: "The vehicle ID the car must present (default: from KEYFILE.car)"),
            .value("code", placeholder: "NNNNNN", help: "enroll: the pairing code the car shows"),
            .value("share", placeholder: "CERTFILE", help: "Present this share certificate in the Hello"),
            .value("object", placeholder: "FILE", help: "revoke: the signed revocation (from carkey revoke)"),
            .value("encoding", placeholder: "der|raw", help: "AuthResponse signature encoding (default der)"),
            .value("timeout", placeholder: "SECONDS", help: "Bound on each wait for the car (default 5)"),
            .flag("uwb", help: "Ask the car's UWB capabilities (command 0x08), set up ranging within them (0x07), let the car range, then send the command"),
            .value("uwb-interval", placeholder: "MS", help: "--uwb: the ranging round interval (default 50, 20 rounds a second)"),
            .value("uwb-wait", placeholder: "MS", help: "--uwb: how long to range before the command (default 400)"),
            .value("misbehave", placeholder: "MODE", help: "Testing aid: break one protocol rule on purpose (modes below)"),
            .value("misbehave-delay", placeholder: "MS", help: "--misbehave late-auth: how late to answer the Challenge (default 10500)"),
            .flag("json", help: "Print one JSON object: result, fault, command, vehicle, vehicleState, key, carTime, times (docs/cli.md)"),
        ] + PhoneTransport.optionSpecs,
        arguments: [Positional("command", help: PhoneOptions.actionNamesForHelp)],
        exitStatuses: [
            ExitStatus(0, "the car answered ok (enroll: enrolled and pinned)"),
            ExitStatus(1, "a fault from the car, a refusal by the phone, or a link failure (every wait bounded by --timeout)"),
        ],
        action: { invocation in
            let options = try PhoneOptions(invocation.arguments)
            switch options.action {
            case .enroll(let code):
                return try PhoneEnrollment.finish(try PhonePairing(options: options, code: code).run(), options: options)
            case .command(let command, _):
                if let mode = options.misbehaviour {
                    return try PhoneMisbehaviour(options: options, mode: mode, delayMillis: options.misbehaveDelayMillis).run()
                }
                return PhoneReport.print(try PhoneExchange(options: options).run(), command: command, json: options.json)
            }
        }
    )
}
