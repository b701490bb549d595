// Typed serial and pseudo-terminal failures, naming the device path where there is one.

public enum SerialError: Error, Equatable, Sendable, CustomStringConvertible {
    /// open(2) failed: no such device, or permission (join group dialout) or busy.
    case openFailed(path: String, errno: Errno)
    /// The path is not a terminal (tcgetattr says ENOTTY), e.g. a regular file or /dev/null.
    case notATerminal(path: String)
    /// A baud rate with no termios constant.
    case unsupportedBaud(Int)
    /// tcsetattr failed or the driver did not take the settings.
    case configureFailed(path: String, errno: Errno)
    /// openpty(3) failed (no /dev/ptmx or devpts).
    case pseudoTerminalFailed(errno: Errno)
    /// read, write or poll failed.
    case ioFailed(errno: Errno)
    /// The other side stopped reading and the output buffer stayed full past the timeout.
    case outputStalled(afterMillis: UInt64)

    public var description: String {
        switch self {
        case .openFailed(let path, let errno): return "serial \(path): cannot open: \(errno)"
        case .notATerminal(let path): return "serial \(path): not a terminal device"
        case .unsupportedBaud(let baud): return "serial: unsupported baud rate \(baud) (supported: \(SerialPort.supportedBaudRates.map(String.init).joined(separator: ", ")))"
        case .configureFailed(let path, let errno): return "serial \(path): cannot configure: \(errno)"
        case .pseudoTerminalFailed(let errno): return "pseudo-terminal: \(errno)"
        case .ioFailed(let errno): return "serial: \(errno)"
        case .outputStalled(let millis): return "serial: output stalled for \(millis) ms, reader gone?"
        }
    }
}
