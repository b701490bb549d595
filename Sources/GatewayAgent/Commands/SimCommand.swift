// `carkey-agent sim --state-dir DIR WORDS...`: moves the simulated world of an agent running
// with --simulate (the console's `sim` command, through DIR/control.sock), so scripts such as
// the `make run` demo can open a door or walk the simulated phone towards the car.
import CommandLineKit
import Drivers

extension Command {
    static let sim = Command(
        name: "sim",
        summary: "Move the simulated world of an agent running with --simulate",
        discussion: """
            Sends `sim WORDS` to the agent running with --state-dir DIR (DIR/control.sock, as
            the agent's user or root) and prints its answer; the words are those of the
            console's sim command, e.g. `sim door open`, `sim handle pull`, `sim uwb place 8`,
            `sim uwb walk 8 0.8 1.4`, `sim uwb relay on`. Exit 1 with the agent's reason when
            it refuses (no --simulate, a usage error).
            """,
        options: [StateDirectoryArgument.option],
        arguments: [Positional("words", arity: .oneOrMore, help: "what to simulate, e.g. door open (see the console's help)")],
        exitStatuses: [
            ExitStatus(0, "done; the agent's answer printed"),
            ExitStatus(1, "no agent runs for DIR, or it refused (no --simulate, bad words): the reason on stderr"),
        ],
        action: { invocation in
            let directory = try StateDirectoryArgument.path(invocation.arguments)
            let words = invocation.arguments.arguments("words")
            let response: ControlResponse
            do {
                response = try ControlClient.request((["sim"] + words).joined(separator: " "),
                                                     socketPath: directory + "/" + ControlProtocol.socketFileName)
            } catch let error as ControlClientError {
                throw AgentToolFailure("\(error)")
            }
            response.lines.forEach { print($0) }
            if let reason = response.error { throw AgentToolFailure(reason) }
            return 0
        }
    )
}
