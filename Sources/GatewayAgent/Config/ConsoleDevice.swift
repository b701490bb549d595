// Where the serial diagnostics console runs.
import Drivers

enum ConsoleDevice: Equatable, CustomStringConvertible {
    /// A serial device such as /dev/ttyAMA0 or the USB gadget /dev/ttyGS0.
    case tty(String)
    /// A fresh pseudo-terminal; its slave path is printed at start-up (--simulate).
    case pty
    /// The agent's own stdin and stdout (a developer's terminal, a script).
    case stdio
    /// No console.
    case none

    static let expectation = "an absolute device path such as /dev/ttyAMA0, or \"pty\", \"stdio\" or \"none\""
    static var baudExpectation: String {
        "one of " + SerialPort.supportedBaudRates.map(String.init).joined(separator: ", ")
    }

    /// Parses the config value or --console argument.
    init?(setting: String) {
        switch setting {
        case "pty": self = .pty
        case "stdio": self = .stdio
        case "none": self = .none
        default:
            // A device is always absolute: a relative path here is almost certainly a typo of a keyword.
            guard setting.hasPrefix("/"), setting.count > 1, setting.utf8.count <= ConfigPaths.maxLength,
                  !setting.utf8.contains(0) else { return nil }
            self = .tty(setting)
        }
    }

    var description: String {
        switch self {
        case .tty(let path): return path
        case .pty: return "pty"
        case .stdio: return "stdio"
        case .none: return "none"
        }
    }
}
