// `carkey-agent run --simulate`: the car with its BLE link simulated on a Unix socket.
import CommandLineKit
import Drivers
import Protocol

extension Command {
    static let run = Command(
        name: "run",
        summary: "Run the agent: phones over Bluetooth LE (--ble) or the simulated link",
        discussion: """
            Runs the crypto self-test and refuses to start if any check fails. Opens the store
            in --state-dir (created 0700), loads or creates the car identity key, and writes
            DIR/car-identity.pub (PEM) and DIR/vehicle-id for tools and tests.

            Phones connect over Bluetooth LE with --ble ADAPTER (or config link.transport
            "ble"): the agent owns the adapter through BlueZ's management API (power, LE,
            name, advertising with the key service UUID and a rotating identifier, private
            addresses) and serves its own GATT key service on the ATT channel. bluetoothd must
            not run: the agent refuses to start next to it (`systemctl disable --now
            bluetooth`). Needs root or CAP_NET_ADMIN + CAP_NET_RAW. docs/protocol.md,
            "Bluetooth LE transport"; board/README.md.

            Otherwise the characteristic is served on a Unix socket (default DIR/ble.sock,
            mode 0600): every message is a 2-byte big-endian length and then exactly the
            characteristic bytes (docs/protocol.md, "Simulated link"). One connection is one
            link; at most 8 at once.

            Settings come from the config file (--config, default /etc/opencarkey/agent.json
            when present; keys in board/README.md), with flags on top. Without --simulate
            the lock actuators and inputs are real GPIO lines (libgpiod) from the board file;
            with it, a simulated chip with the built-in simulated board (or --board), and a
            serial console on a new pty whose path is printed (--console to change).

            Keys live sealed in the store and survive restarts. The first owner can only be
            enrolled through the pairing window: `carkey-agent pair --state-dir DIR` asks the
            running agent over DIR/control.sock (mode 0600, this user and root only) and prints
            the one-time code for `carkey phone enroll --code`. See docs/operations.md.

            --conformance is for app teams testing a phone against this car (simulated link or
            BLE): every way a connected phone deviates from docs/protocol.md (framing, message
            order, late answers, counters, repeated Hellos and retries beyond the handshake
            budget, timestamps, signatures, certificates) is reported on stderr as it happens,
            as a 'conformance: LINK deviation RULE ...' line naming the rule, and each link's
            checklist follows when it ends; the console's `conformance` and `carkey-agent
            conformance [--json]` show the last links' checklists. The car still decides and
            refuses exactly as without the flag: the report only watches. docs/phone-app.md.

            Stops cleanly on SIGINT or SIGTERM (the socket is removed). Logs one line per event
            on stderr, start-up report included (the console's pty path, and "control socket
            PATH" once phones are served), so `2>agent.log` keeps it all; stdout is only the
            console's, with --console stdio. No keys, session keys or signatures are ever logged.
            """,
        options: [
            .flag("simulate", help: "Simulated GPIO chip and a pty console (phones use the Unix socket unless --ble)"),
            .flag("simulate-uwb", help: "With --simulate: a simulated DW3000 UWB module and phone radio (move the phone with `sim uwb`)"),
            .value("state-dir", placeholder: "DIR", help: "State directory (store, identity key, socket)"),
            .value("vehicle", aliases: ["vehicle-id"], placeholder: "ID", help: "Vehicle ID, 1-32 printable ASCII (default \(RunOptions.defaultSimulatedVehicleID))"),
            .value("socket", placeholder: "PATH", help: "Socket path (default DIR/\(RunOptions.socketFileName))"),
            .flag("conformance", help: "Report each phone's deviations from docs/protocol.md, rule by rule (the car refuses as always)"),
        ] + CloudOptions.optionSpecs + ConfigOverrides.optionSpecs + KeysRunOptions.optionSpecs
            + StoreSettings.optionSpecs + AuditSettings.optionSpecs + LinkSettings.optionSpecs,
        exitStatuses: [
            ExitStatus(0, "stopped cleanly on SIGINT or SIGTERM"),
            ExitStatus(1, "could not start (self-test, store, GPIO, sockets) or stopped on an error: the reason on stderr"),
            ExitStatus(AgentVault.doNotRetryStatus, "the key vault refused access (a locked token, a wrong PIN): a supervisor must not restart it (RestartPreventExitStatus=78)"),
        ],
        action: { invocation in
            // An OTA configuration apply a crash interrupted: last-good back before it is read.
            let recovered = try ConfigRecovery.recoverIfInterrupted(configPath: invocation.arguments.value("config") ?? AgentConfig.defaultPath)
            let options = try RunOptions(invocation.arguments)
            return try CarAgent(options: options, log: AgentLog(), recoveredConfig: recovered).run()
        }
    )
}
