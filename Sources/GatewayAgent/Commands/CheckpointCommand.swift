// `carkey-agent checkpoint --state-dir DIR`: asks the running agent to sign a checkpoint of its
// audit chain's head now (docs/cloud.md "Checkpoint now"). Checkpoints and events are not
// retained on the broker, so an investigator who starts `carkey audit verify --mqtt` needs the
// car to vouch for the events it hears without waiting up to 10 minutes for the next one.
import CommandLineKit
import Drivers
import Protocol

extension Command {
    static let checkpoint = Command(
        name: "checkpoint",
        summary: "Have the running agent sign an audit checkpoint now and publish it",
        discussion: """
            Connects to DIR/control.sock of the agent running with --state-dir DIR (as the
            agent's user or root). The agent signs a checkpoint of its audit chain's head with
            its identity key, keeps it, and queues it for vehicles/{id}/audit like the ones it
            writes on its own (every 10 minutes while events arrive, and on a clean stop); it
            is published when the cloud link is up. Prints 'checkpoint seq N head HASH'.
            """,
        options: [
            StateDirectoryArgument.option,
            .flag("json", help: "Print {\"seq\":N,\"headHash\":HEX}"),
        ],
        exitStatuses: [
            ExitStatus(0, "written and queued; its seq and head hash printed"),
            ExitStatus(1, "no agent runs for DIR, no event yet to vouch for, or not written: the reason on stderr"),
        ],
        action: { invocation in
            let directory = try StateDirectoryArgument.path(invocation.arguments)
            let response: ControlResponse
            do {
                response = try ControlClient.request("checkpoint", socketPath: directory + "/" + ControlProtocol.socketFileName)
            } catch let error as ControlClientError {
                throw AgentToolFailure("\(error)")
            }
            if let reason = response.error { throw AgentToolFailure("no checkpoint: \(reason)") }
            let words = response.lines.first?.split(separator: " ").map(String.init) ?? []
            guard words.count == 5, words[0] == "checkpoint", words[1] == "seq", let seq = Int64(words[2]), words[3] == "head",
                  words[4].count == 64, Bytes(hex: words[4]) != nil else {
                throw AgentToolFailure("the agent sent an unexpected answer")
            }
            if invocation.arguments.flag("json") {
                print(JSONValue.object([("seq", .integer(seq)), ("headHash", .string(words[4]))]).serialized)
            } else {
                print("checkpoint seq \(seq) head \(words[4])")
            }
            return 0
        }
    )
}
