// `carkey-agent status --state-dir DIR [--json] [--wait SECONDS]`: the running agent at a
// glance (vehicle, lock state, clock, keys, pairing window, sessions) from DIR/control.sock,
// with its own exit status when no agent runs, so scripts can wait for one or tell it apart.
#if canImport(Glibc)
import Glibc
#endif
import CommandLineKit
import Drivers
import Protocol

/// No agent answers for the state directory: exit 3, as LSB init scripts' "status" says "not running".
struct AgentNotRunning: ExitStatusError, CustomStringConvertible {
    static let status: Int32 = 3
    let description: String
    var exitStatus: Int32 { Self.status }
}

extension Command {
    static let status = Command(
        name: "status",
        summary: "Print the running agent's status: vehicle, locks, clock, keys, pairing window, sessions",
        discussion: """
            Asks the agent running with --state-dir DIR over DIR/control.sock (as the agent's
            user or root; the console's `status` shows more: doors, actuators, cloud link). With
            --wait SECONDS it retries until an agent answers, for scripts that start one in the
            background. Never opens the store.
            """,
        options: [
            StateDirectoryArgument.option,
            .flag("json", help: "Print one JSON object: vehicle, vehicleState, clock, keys, pairing, sessions"),
            .value("wait", placeholder: "SECONDS", help: "Wait up to SECONDS (1 to 600) for an agent to answer (default: ask once)"),
        ],
        exitStatuses: [
            ExitStatus(0, "the agent answered; its status is printed"),
            ExitStatus(1, "the agent could not be asked (permission, a broken answer): the reason on stderr"),
            ExitStatus(AgentNotRunning.status, "no agent runs for DIR (within --wait SECONDS): the reason on stderr"),
        ],
        action: { invocation in
            let arguments = invocation.arguments
            let directory = try StateDirectoryArgument.path(arguments)
            let waitSeconds = try arguments.integer("wait")
            if let waitSeconds, !(1...600).contains(waitSeconds) {
                throw UsageError.invalidValue(String(waitSeconds), for: "--wait", expected: "1 to 600 seconds")
            }
            let socket = directory + "/" + ControlProtocol.socketFileName
            let response = try AgentStatus.ask(socket: socket, waitSeconds: waitSeconds ?? 0)
            if let reason = response.error { throw AgentToolFailure("the agent did not send its status: \(reason)") }
            guard let status = AgentStatus(lines: response.lines) else { throw AgentToolFailure("the agent sent an unexpected answer") }
            print(arguments.flag("json") ? status.json.serialized : status.text)
            return 0
        }
    )
}

/// The control socket's `status` answer, parsed (ControlCommands.status writes it).
struct AgentStatus: Equatable {
    var vehicle: String
    var clockTrusted: Bool
    var trustedMark: String?
    var keys: [(name: String, value: Int64)]
    var pairingOpen: Bool
    var pairingExpiresIn: Int64?
    var sessions: Int64
    var state: VehicleState

    static func == (lhs: AgentStatus, rhs: AgentStatus) -> Bool { lhs.json == rhs.json }

    /// Asks once, or until an agent answers within `waitSeconds`.
    static func ask(socket: String, waitSeconds: Int) throws -> ControlResponse {
        let deadline = monotonicMillis() + UInt64(waitSeconds) * 1000
        while true {
            do {
                return try ControlClient.request("status", socketPath: socket)
            } catch .noAgent {
                guard monotonicMillis() < deadline else {
                    throw AgentNotRunning(description: "no agent is running for this state directory (nothing listens on \(socket))"
                                          + (waitSeconds > 0 ? " after waiting \(waitSeconds) s" : "")
                                          + "; start one with carkey-agent run --state-dir \(socket.dropLast(ControlProtocol.socketFileName.count + 1))")
                }
                SystemClock().sleep(millis: 100)
            } catch {
                throw AgentToolFailure("\(error)")
            }
        }
    }

    init?(lines: [String]) {
        var fields: [String: [Substring]] = [:]
        for line in lines {
            let words = line.split(separator: " ")
            guard let name = words.first, fields[String(name)] == nil else { return nil }
            fields[String(name)] = Array(words.dropFirst())
        }
        guard let vehicle = fields["vehicle"], vehicle.count == 1,
              let clock = fields["clock"], clock.count == 3, clock[1] == "mark", ["trusted", "not-trusted"].contains(clock[0]),
              let keys = fields["keys"], keys.count == 12, keys[10] == "of",
              let pairing = fields["pairing"], let sessionsWords = fields["sessions"], sessionsWords.count == 1,
              let sessions = Int64(sessionsWords[0]),
              let state = fields["state"], let raw = state.first.flatMap({ UInt16($0) }) else { return nil }
        self.vehicle = String(vehicle[0])
        clockTrusted = clock[0] == "trusted"
        trustedMark = clock[2] == "none" ? nil : String(clock[2])
        var counts: [(String, Int64)] = []
        for (index, name) in ["active", "owners", "shared", "revoked", "free"].enumerated() {
            guard keys[index * 2] == Substring(name), let value = Int64(keys[index * 2 + 1]) else { return nil }
            counts.append((name, value))
        }
        guard let slots = Int64(keys[11]) else { return nil }
        self.keys = counts + [("slots", slots)]
        switch pairing.count {
        case 1 where pairing[0] == "closed" || pairing[0] == "open":
            pairingOpen = pairing[0] == "open"
            pairingExpiresIn = nil
        case 3 where pairing[0] == "open" && pairing[1] == "expires-in":
            guard let seconds = Int64(pairing[2]) else { return nil }
            pairingOpen = true
            pairingExpiresIn = seconds
        default:
            return nil
        }
        self.sessions = sessions
        self.state = VehicleState(rawValue: raw)
    }

    private func key(_ name: String) -> Int64 { keys.first { $0.name == name }?.value ?? 0 }

    var text: String {
        [
            "vehicle: \(vehicle)",
            "state: \(state.summary)",
            "clock: \(clockTrusted ? "trusted" : "not trusted")" + (trustedMark.map { " (trusted-time mark \($0))" } ?? " (no trusted-time mark yet)"),
            "keys: \(key("active")) active (\(key("owners")) owner, \(key("shared")) shared), \(key("revoked")) revoked, "
                + "\(key("free")) of \(key("slots")) slots free",
            "pairing window: " + (pairingOpen ? "open" + (pairingExpiresIn.map { ", closes in \($0) s" } ?? "") : "closed"),
            "sessions: \(sessions)",
        ].joined(separator: "\n")
    }

    var json: JSONValue {
        .object([
            ("vehicle", .string(vehicle)),
            ("vehicleState", .object([
                ("summary", .string(state.summary)), ("bits", .integer(Int64(state.rawValue))),
                ("locked", .bool(state.contains(.locked))), ("driverDoorOpen", .bool(state.contains(.driverDoorOpen))),
                ("anyDoorOpen", .bool(state.contains(.anyDoorOpen))), ("trunkOpen", .bool(state.contains(.trunkOpen))),
                ("trunkLocked", .bool(state.contains(.trunkLocked))),
            ])),
            ("clock", .object([("trusted", .bool(clockTrusted)), ("trustedMark", trustedMark.map { .string($0) } ?? .null)])),
            ("keys", .object(keys.map { ($0.name, .integer($0.value)) })),
            ("pairing", .object([("open", .bool(pairingOpen)), ("expiresInSeconds", pairingExpiresIn.map { .integer($0) } ?? .null)])),
            ("sessions", .integer(sessions)),
        ])
    }

    private static func monotonicMillis() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return UInt64(spec.tv_sec) * 1000 + UInt64(spec.tv_nsec) / 1_000_000
    }
}
