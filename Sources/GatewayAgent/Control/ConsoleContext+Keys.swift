// The serial console's key hooks, answered by the same ControlCommands as DIR/control.sock, so
// both front ends (and the pairing button) open the same window and list the same keys.
import Protocol

extension ConsoleContext {
    func wire(_ commands: ControlCommands) {
        // Unowned: the commands hold the console (stats) that holds this context; they live as
        // long as the control socket, which outlives every console line.
        openPairingWindow = { [unowned commands] in commands.openPairingWindow().map(\.code).mapError(\.fault) }
        isPairingWindowOpen = { [unowned commands] in commands.isPairingWindowOpen() }
        keyLines = { [unowned commands] in commands.keyLines() }
        conformanceLines = { [unowned commands] words in
            let response = commands.conformanceReport(words)
            return response.lines + (response.error.map { ["error: " + $0] } ?? [])
        }
    }
}
