// `carkey command sign|send`: an owner or fleet back end signs a remote command for one car
// (docs/cloud.md "Remote commands") and, with `send`, publishes it on vehicles/{id}/cmd and
// can wait for the car's answer on vehicles/{id}/results.
import CommandLineKit
import Drivers
import Protocol
#if canImport(Glibc)
import Glibc
#endif

extension Command {
    static let command = Command(
        name: "command",
        summary: "Sign and send remote commands (lock, unlock, trunk, status, report)",
        subcommands: [.commandSign, .commandSend]
    )

    private static let signOptions: [Option] = [
        .value("key", placeholder: "KEYFILE", help: "The owner's or fleet operator's private key (PKCS#8 PEM)"),
        .value("vehicle", placeholder: "ID", help: "The car's vehicle ID"),
        .value("command", placeholder: "ACTION", help: "lock, unlock, trunk, status or report"),
        .value("expires-in", placeholder: "SECONDS", help: "Lifetime, 1 to 60 (default 30)"),
        .value("issued-at", placeholder: "ISO8601", help: "Issue time (default: now)"),
        .value("id", placeholder: "UUID", help: "The command's UUID (default: random)"),
    ]

    static let commandSign = Command(
        name: "sign",
        summary: "Sign a remote command and print its envelope (exit 0, 2 usage)",
        discussion: """
            Prints the envelope to publish on vehicles/{id}/cmd,
            {"id":UUID,"type":"command","body":HEX}; with --json also the decoded fields.
            """,
        options: signOptions + [.flag("json", help: "Print a JSON object with the fields and the envelope")],
        exitStatuses: [
            ExitStatus(0, "signed; the envelope printed"),
            ExitStatus(1, "not signed: the reason on stderr"),
        ],
        action: { invocation in
            let (command, envelope) = try RemoteCommandArguments.sign(invocation.arguments)
            if invocation.arguments.flag("json") {
                print(#"{"command":"\#(command.uuidString)","vehicle":"\#(command.vehicleID)","action":"\#(command.action)","issuedAt":\#(command.issuedAt),"expiresAt":\#(command.expiresAt),"signer":"\#(command.signerKeyID)","envelope":\#(envelope)}"#)
            } else {
                print(envelope)
            }
            return 0
        }
    )

    static let commandSend = Command(
        name: "send",
        summary: "Sign a remote command and publish it to the broker (exit 0 sent or ok, 1 refused or no answer, 2 usage)",
        discussion: """
            Publishes at QoS 1 on vehicles/{id}/cmd. With --wait-result, waits (default 10 s)
            for the answer on vehicles/{id}/results and prints it; exit 0 only when it is ok.
            Without an answer, says what the broker holds on the car's retained
            vehicles/{id}/status (online, offline, lost, or nothing: a wrong --vehicle or a car
            that never connected to this broker). mqtts:// needs --mqtt-ca, and --mqtt-cert
            with --mqtt-key for a broker that wants a client certificate.
            """,
        options: signOptions + BrokerArguments.options + [
            .flag("wait-result", help: "Wait for the car's result and print it"),
            .value("timeout", placeholder: "SECONDS", help: "How long --wait-result waits (default 10)"),
            .flag("json", help: "Print one JSON object: command (its UUID), sent, result (the car's result object, or null), timedOut"),
        ],
        exitStatuses: [
            ExitStatus(0, "published (with --wait-result: the car answered ok)"),
            ExitStatus(1, "refused by the car, no answer within --timeout, or the broker unreachable"),
        ],
        action: { invocation in
            let arguments = invocation.arguments
            let (command, envelope) = try RemoteCommandArguments.sign(arguments)
            let options = try BrokerArguments.connectOptions(arguments, url: try arguments.require("mqtt"), clientID: "carkey-command-\(getpid())")
            let topics = CloudTopics(vehicleID: command.vehicleID.description)
            let timeout = try arguments.integer("timeout") ?? 10
            let waits = arguments.flag("wait-result")
            let outcome = try RemoteCommandSender(options: options).send(envelope: envelope, topics: topics, waitForResult: waits,
                                                                          commandID: command.uuidString, timeoutSeconds: timeout)
            let json = arguments.flag("json")
            func report(_ result: JSONValue, timedOut: Bool) {
                print(JSONValue.object([("command", .string(command.uuidString)), ("sent", .bool(true)), ("result", result),
                                        ("timedOut", .bool(timedOut))]).serialized)
            }
            guard waits else {
                if json { report(.null, timedOut: false) } else { print("sent \(command.uuidString)") }
                return 0
            }
            guard let answer = outcome.result else {
                if json { report(.null, timedOut: true) } else { print("no result within \(timeout) s") }
                writeStderr("carkey: hint: \(RemoteCommandSender.presenceHint(outcome.status, topics: topics))\n")
                return 1
            }
            if json { report(.raw(answer), timedOut: false) } else { print(answer) }
            return RemoteCommandSender.resultField(answer, "result") == "ok" ? 0 : 1
        }
    )
}

enum RemoteCommandArguments {
    static func sign(_ arguments: ParsedArguments) throws -> (RemoteCommand, String) {
        let key = try OwnerKeyFile.load(try arguments.require("key"))
        let vehicleID = try KeyToolArguments.vehicleID(arguments)
        let name = try arguments.require("command")
        guard let action = RemoteAction(name: name) else {
            throw UsageError("'--command' must be one of lock, unlock, trunk, status, report, got '\(name)'")
        }
        let lifetime = try arguments.integer("expires-in") ?? Int(RemoteCommand.defaultLifetimeSeconds)
        guard (1...Int(RemoteCommand.maxLifetimeSeconds)).contains(lifetime) else {
            throw UsageError("'--expires-in' must be 1 to \(RemoteCommand.maxLifetimeSeconds) seconds")
        }
        let issuedAt = try arguments.value("issued-at").map { _ in try KeyToolArguments.time(arguments, "issued-at") }
            ?? UInt32(clamping: KeyToolArguments.currentTime())
        let id: Bytes
        if let text = arguments.value("id") {
            guard InboundGate.isUUID(text), let bytes = Bytes(hex: text.filter { $0 != "-" }) else {
                throw UsageError("'--id' must be a UUID (8-4-4-4-12 hex digits)")
            }
            id = bytes
        } else {
            id = try SystemRandom().randomBytes(16)
        }
        let command: RemoteCommand
        do {
            command = try RemoteCommand.issue(by: key, commandID: id, vehicleID: vehicleID, action: action, issuedAt: issuedAt,
                                              lifetimeSeconds: UInt32(lifetime))
        } catch {
            throw ToolFailure("cannot sign the command: \(error)")
        }
        // A fresh envelope ID per signing: the envelope is transport, the signed UUID is the command.
        let envelopeID = RemoteCommand.uuidString(try SystemRandom().randomBytes(16))
        return (command, #"{"id":"\#(envelopeID)","type":"command","body":"\#(command.encoded().hexString)"}"#)
    }
}

/// Publishes one envelope with the in-tree libmosquitto transport and optionally waits for
/// the result that names the command, reading the car's retained presence meanwhile.
struct RemoteCommandSender {
    let options: MQTTConnectOptions

    struct Outcome {
        /// The car's result message, nil without one.
        var result: String?
        /// The retained vehicles/{id}/status payload the broker holds, nil when it holds none
        /// (only read while waiting for a result).
        var status: String?
    }

    func send(envelope: String, topics: CloudTopics, waitForResult: Bool, commandID: String, timeoutSeconds: Int) throws -> Outcome {
        let transport = try MosquittoTransport(options: options)
        defer { transport.disconnect() }
        try transport.connect()
        let deadline = Self.nowMillis() + UInt64(max(1, timeoutSeconds)) * 1000
        var connected = false
        while !connected, Self.nowMillis() < deadline {
            let pass = transport.service(timeoutMillis: 50)
            for event in pass.events {
                if case .connected = event { connected = true }
                if case .connectRefused(let code) = event { throw ToolFailure("the broker refused the connection (reason \(MQTTReasonCode.describe(code)))") }
            }
        }
        guard connected else { throw ToolFailure("could not connect to the broker") }
        var outcome = Outcome()
        if waitForResult {
            try transport.subscribe(topics.results, qos: .exactlyOnce)
            try transport.subscribe(topics.status, qos: .atLeastOnce)
            // Let the SUBACK arrive before publishing, so a fast car's answer is not missed.
            for _ in 0..<5 { outcome.status = Self.collect(transport.service(timeoutMillis: 20).events, topics, into: outcome.status) }
        }
        _ = try transport.publish(MQTTPublish(topic: topics.remoteCommands, payload: Array(envelope.utf8), qos: .atLeastOnce))
        var published = false
        while Self.nowMillis() < deadline {
            let events = transport.service(timeoutMillis: 20).events
            outcome.status = Self.collect(events, topics, into: outcome.status)
            for event in events {
                switch event {
                case .published: published = true
                case .message(let message) where waitForResult && message.topic == topics.results:
                    let text = String(decoding: message.payload, as: UTF8.self)
                    if Self.resultField(text, "command") == commandID {
                        outcome.result = text
                        return outcome
                    }
                default: break
                }
            }
            if !waitForResult, published { return outcome }
        }
        if !waitForResult, !published { throw ToolFailure("the broker did not acknowledge the command") }
        return outcome
    }

    /// The newest status payload among `events`, else `current`.
    private static func collect(_ events: [MQTTEvent], _ topics: CloudTopics, into current: String?) -> String? {
        var status = current
        for case .message(let message) in events where message.topic == topics.status {
            status = String(decoding: message.payload, as: UTF8.self)
        }
        return status
    }

    /// What to check when no result came, from the car's retained presence on this broker.
    static func presenceHint(_ status: String?, topics: CloudTopics) -> String {
        guard let status, let state = resultField(status, "state") else {
            return "the broker holds no presence for vehicle \(topics.vehicleID) (\(topics.status) is empty): check --vehicle, "
                + "and that the car is configured with this broker (carkey-agent run --mqtt)"
        }
        switch state {
        case "online":
            return "\(topics.status) says online: the car is connected but did not answer; its log says why (a command it could not read, or a slow actuator)"
        case "offline":
            return "\(topics.status) says offline: the car stopped cleanly; the command waits in its session until it connects again (and expires in --expires-in)"
        default:
            return "\(topics.status) says \(state): the car lost its connection; the command waits in its session until it reconnects (and expires in --expires-in)"
        }
    }

    /// A top-level string field of a result message, or nil when the message is not a JSON
    /// object or lacks it. (Parsed rather than searched: a substring search matches the field
    /// anywhere, and String.contains(String) pulls _StringProcessing into the static binary.)
    static func resultField(_ text: String, _ name: String) -> String? {
        guard case .object(let fields) = try? JSONTree.parse(Array(text.utf8)) else { return nil }
        return fields[name]?.stringValue
    }

    static func nowMillis() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return UInt64(spec.tv_sec) * 1000 + UInt64(spec.tv_nsec) / 1_000_000
    }
}
