// The serial console's key hooks, answered by the same ControlCommands as DIR/control.sock, so
// both front ends (and the pairing button) open the same window and list the same keys.
import Protocol

extension ConsoleContext {
    func wire(_ commands: ControlCommands) {
        openPairingWindow = { commands.openPairingWindow().map(\.code).mapError(\.fault) }
        isPairingWindowOpen = { commands.isPairingWindowOpen() }
        keyLines = { commands.keyLines() }
    }
}
