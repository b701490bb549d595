// `carkey-agent pair --state-dir DIR`: asks the running agent to open its pairing window and
// prints the one-time code (the serial console offers the same command).
import CommandLineKit
import Drivers

extension Command {
    static let pair = Command(
        name: "pair",
        summary: "Open the running agent's pairing window and print the one-time code",
        discussion: """
            Connects to DIR/control.sock of the agent running with --state-dir DIR (as the
            agent's user or root) and opens the pairing window: prints 'code NNNNNN' and
            'expires-in SECONDS'. The code is single use; five wrong codes close the window.
            Enter it on the phone (carkey phone --key FILE --connect unix:DIR/ble.sock enroll
            --code NNNNNN) within the window. Exit 1 with a reason when no agent runs or the
            keychain is full. The code is a secret while the window is open: do not log it.
            """,
        options: [
            StateDirectoryArgument.option,
            .flag("json", help: "Print {\"code\":...,\"expiresInSeconds\":...}"),
        ],
        exitStatuses: [
            ExitStatus(0, "the window is open; the code printed"),
            ExitStatus(1, "no agent runs for DIR, or it refused (a full keychain): the reason on stderr"),
        ],
        action: { invocation in
            let directory = try StateDirectoryArgument.path(invocation.arguments)
            let response: ControlResponse
            do {
                response = try ControlClient.request("pair", socketPath: directory + "/" + ControlProtocol.socketFileName)
            } catch let error as ControlClientError {
                throw AgentToolFailure("\(error)")
            }
            if let reason = response.error { throw AgentToolFailure("the agent did not open the pairing window: \(reason)") }
            let words = response.lines.first?.split(separator: " ").map(String.init) ?? []
            guard words.count == 4, words[0] == "code", words[2] == "expires-in", let seconds = Int(words[3]) else {
                throw AgentToolFailure("the agent sent an unexpected answer")
            }
            if invocation.arguments.flag("json") {
                print(JSONValue.object([("code", .string(words[1])), ("expiresInSeconds", .integer(Int64(seconds)))]).serialized)
            } else {
                print("code \(words[1])")
                print("expires-in \(seconds)")
            }
            return 0
        }
    )
}
