// The descriptors under the console: a serial tty opened with termios, a fresh pty (the agent
// keeps the master, the engineer opens the printed slave path), or stdin/stdout.
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Drivers

struct ConsoleTransport {
    let input: FileDescriptor
    let output: FileDescriptor
    /// Echo typed characters and show a prompt: a terminal program on a raw line expects the
    /// far end to echo. Not on stdio, where the local terminal echoes (or a script types).
    let interactive: Bool
    /// What the engineer connects to, for the start-up line ("/dev/pts/3", "/dev/ttyAMA0").
    let endpoint: String
    private let closeAll: @Sendable () -> Void

    func close() { closeAll() }

    /// nil for `.none`.
    static func open(_ device: ConsoleDevice, baud: Int) throws(SerialError) -> ConsoleTransport? {
        switch device {
        case .none:
            return nil
        case .tty(let path):
            let port = try SerialPort.open(path: path, baud: baud)
            return ConsoleTransport(input: port.descriptor, output: port.descriptor, interactive: true,
                                    endpoint: "\(path) at \(baud) 8N1", closeAll: { port.close() })
        case .pty:
            // The agent holds the slave open as well, so the master never sees a hang-up when
            // the engineer's terminal program disconnects and reconnects.
            let pair = try PseudoTerminal.open()
            return ConsoleTransport(input: pair.master, output: pair.master, interactive: true,
                                    endpoint: pair.slavePath, closeAll: { pair.close() })
        case .stdio:
            // Non-blocking so a console read never stalls the loop. stdout stays blocking: the
            // log's print() shares it (answers are short and the write is bounded anyway).
            let input = FileDescriptor.standardInput
            let flags = fcntl(input.rawValue, F_GETFL)
            guard flags >= 0, fcntl(input.rawValue, F_SETFL, flags | O_NONBLOCK) == 0 else {
                throw .ioFailed(errno: Errno.current("fcntl stdin"))
            }
            // The flag lives on the open file, shared with the shell that started us: put it back.
            return ConsoleTransport(input: input, output: FileDescriptor.standardOutput, interactive: false,
                                    endpoint: "stdin/stdout", closeAll: { _ = fcntl(input.rawValue, F_SETFL, flags) })
        }
    }
}
