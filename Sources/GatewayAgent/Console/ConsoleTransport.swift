// The descriptors under the console: a serial tty opened with termios, a fresh pty (the agent
// keeps the master, the engineer opens the printed slave path), or stdin/stdout.
#if canImport(Glibc)
import Glibc
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
            // Non-blocking so a console read never stalls the loop.
            let input = FileDescriptor.standardInput
            let flags: CInt
            do throws(Errno) {
                flags = try input.statusFlags()
                try input.setStatusFlags(flags | O_NONBLOCK)
            } catch {
                throw .ioFailed(errno: error)
            }
            let output = standardOutputForConsole()
            // The flag lives on the open file, shared with the shell that started us: put it back.
            return ConsoleTransport(input: input, output: output.descriptor, interactive: false,
                                    endpoint: "stdin/stdout", closeAll: {
                                        try? input.setStatusFlags(flags)
                                        if output.owned { output.descriptor.close() }
                                    })
        }
    }

    /// Where console answers go on stdio: a non-blocking open file description of stdout's file
    /// of its own (O_NONBLOCK on fd 1 itself would reach the shell and the log's print(), which
    /// share that description and expect blocking writes). A pipe nobody reads then costs the
    /// loop nothing. Where stdout cannot be reopened (a socket), fd 1 itself: BoundedOutput
    /// then polls it for writable before each write of at most 4096 bytes. A regular file is
    /// used as it is: it never makes a write wait, and a second description would write from
    /// offset 0 over what the log wrote.
    static func standardOutputForConsole() -> (descriptor: FileDescriptor, owned: Bool) {
        var info = stat()
        if fstat(1, &info) == 0, info.st_mode & S_IFMT == S_IFREG { return (.standardOutput, false) }
        guard let reopened = try? FileDescriptor.open("/proc/self/fd/1", O_WRONLY | O_NONBLOCK | O_NOCTTY) else { return (.standardOutput, false) }
        return (reopened, true)
    }
}
