// A pseudo-terminal pair for --simulate and tests: the master plays the engineer's end of the
// cable, the slave is a real tty the console can open by path like /dev/ttyS0.
#if canImport(Glibc)
import Glibc
#endif

public struct PseudoTerminal: Sendable {
    /// Non-blocking; what is written here arrives at the slave, and the slave's output is read here.
    public let master: FileDescriptor
    /// Kept open for the pair's lifetime: with no slave open, reads on the master fail with EIO.
    public let slave: FileDescriptor
    /// e.g. /dev/pts/3: print it for `picocom`, `screen` or `SerialPort.open`.
    public let slavePath: String

    /// Opens a pair with the slave in raw mode, so the kernel adds no echo or CR/LF translation
    /// even before a terminal program configures it.
    public static func open() throws(SerialError) -> PseudoTerminal {
        var masterFD: CInt = -1
        var slaveFD: CInt = -1
        // glibc 2.34+ has openpty in libc itself; no -lutil needed (Debian 12 has 2.36).
        guard openpty(&masterFD, &slaveFD, nil, nil, nil) == 0 else {
            throw .pseudoTerminalFailed(errno: Errno.current("openpty"))
        }
        let master = FileDescriptor(rawValue: masterFD)
        let slave = FileDescriptor(rawValue: slaveFD)
        do throws(SerialError) {
            try master.makeNonBlockingAndCloseOnExec(nonBlocking: true)
            try slave.makeNonBlockingAndCloseOnExec(nonBlocking: false)
            var settings = termios()
            guard tcgetattr(slaveFD, &settings) == 0 else { throw .pseudoTerminalFailed(errno: Errno.current("tcgetattr pty")) }
            cfmakeraw(&settings)
            guard tcsetattr(slaveFD, TCSANOW, &settings) == 0 else { throw .pseudoTerminalFailed(errno: Errno.current("tcsetattr pty")) }
            return PseudoTerminal(master: master, slave: slave, slavePath: try slaveName(slaveFD))
        } catch {
            master.close()
            slave.close()
            throw error
        }
    }

    public func close() {
        master.close()
        slave.close()
    }

    private static func slaveName(_ fd: CInt) throws(SerialError) -> String {
        var buffer = [CChar](repeating: 0, count: 128)
        let result = ttyname_r(fd, &buffer, buffer.count)
        guard result == 0 else { throw .pseudoTerminalFailed(errno: Errno(result, "ttyname_r")) }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
