// Opens a tty (a UART such as /dev/ttyAMA0, a USB gadget /dev/ttyGS0, or a pty slave) in raw
// 8N1 mode without flow control: a diagnostics cable usually has only TX, RX and GND wired, so
// hardware flow control would stall output forever.
#if canImport(Glibc)
import Glibc
#endif

public struct SerialPort: Sendable {
    public static let defaultBaud = 115_200

    /// termios speed constants by baud rate. Bounded to what Pi UARTs and USB adapters handle.
    static let speeds: [Int: speed_t] = [
        9_600: speed_t(B9600), 19_200: speed_t(B19200), 38_400: speed_t(B38400), 57_600: speed_t(B57600),
        115_200: speed_t(B115200), 230_400: speed_t(B230400), 460_800: speed_t(B460800), 921_600: speed_t(B921600),
    ]

    public static var supportedBaudRates: [Int] { speeds.keys.sorted() }

    public let path: String
    public let baud: Int
    public let descriptor: FileDescriptor

    /// Opens and configures `path`. The descriptor is non-blocking: reads go through poll.
    public static func open(path: String, baud: Int = defaultBaud) throws(SerialError) -> SerialPort {
        guard let speed = speeds[baud] else { throw .unsupportedBaud(baud) }
        let descriptor: FileDescriptor
        do {
            // O_NOCTTY: the console must not become the agent's controlling terminal (a hangup
            // would then SIGHUP the agent). O_NONBLOCK: do not wait for modem carrier.
            descriptor = try FileDescriptor.open(path, O_RDWR | O_NOCTTY | O_NONBLOCK)
        } catch {
            throw .openFailed(path: path, errno: error)
        }
        do throws(SerialError) {
            try configure(descriptor, path: path, speed: speed)
        } catch {
            descriptor.close()
            throw error
        }
        return SerialPort(path: path, baud: baud, descriptor: descriptor)
    }

    public func close() { descriptor.close() }

    private static func configure(_ descriptor: FileDescriptor, path: String, speed: speed_t) throws(SerialError) {
        var settings = termios()
        guard tcgetattr(descriptor.rawValue, &settings) == 0 else {
            if errno == ENOTTY { throw .notATerminal(path: path) }
            throw .configureFailed(path: path, errno: Errno.current("tcgetattr \(path)"))
        }
        // Raw: no echo, no line editing, no signals from ^C, no CR/LF translation either way.
        cfmakeraw(&settings)
        settings.c_cflag &= ~(tcflag_t(CSIZE) | tcflag_t(PARENB) | tcflag_t(CSTOPB) | tcflag_t(CRTSCTS))
        settings.c_cflag |= tcflag_t(CS8) | tcflag_t(CREAD) | tcflag_t(CLOCAL)
        settings.c_iflag &= ~(tcflag_t(IXON) | tcflag_t(IXOFF) | tcflag_t(IXANY))
        // VMIN 0 / VTIME 0: read returns what is there; waiting is poll's job.
        withUnsafeMutableBytes(of: &settings.c_cc) { bytes in
            bytes[Int(VMIN)] = 0
            bytes[Int(VTIME)] = 0
        }
        guard cfsetispeed(&settings, speed) == 0, cfsetospeed(&settings, speed) == 0,
              tcsetattr(descriptor.rawValue, TCSANOW, &settings) == 0 else {
            throw .configureFailed(path: path, errno: Errno.current("tcsetattr \(path)"))
        }
        // tcsetattr succeeds if any one setting took; read back to be sure the speed did.
        var applied = termios()
        guard tcgetattr(descriptor.rawValue, &applied) == 0, cfgetospeed(&applied) == speed else {
            throw .configureFailed(path: path, errno: Errno(EINVAL, "baud rate not applied on \(path)"))
        }
        // Drop whatever was received before we listened (boot noise from the other side).
        _ = tcflush(descriptor.rawValue, TCIFLUSH)
    }
}
