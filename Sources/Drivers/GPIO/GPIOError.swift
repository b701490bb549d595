// Typed GPIO failures. Each names the role, chip and line so a start-up failure is actionable.

/// Which line an error is about: the role it plays and where the board file says it is.
public struct GPIOLineReference: Sendable, Hashable, CustomStringConvertible {
    public var role: String
    public var chip: String
    public var line: UInt32

    public init(role: String, chip: String, line: UInt32) {
        self.role = role
        self.chip = chip
        self.line = line
    }

    public var description: String { "\(role) (chip \(chip), line \(line))" }
}

public enum GPIOError: Error, Equatable, Sendable, CustomStringConvertible {
    /// No chip with that name, path or label exists (wrong board file, or no GPIO in this kernel).
    case chipNotFound(chip: GPIOChipAddress, role: String)
    /// The chip exists but could not be opened (permissions: run as root or join group gpio).
    case chipUnavailable(chip: GPIOChipAddress, role: String, errno: Errno)
    /// The offset is not on this chip.
    case lineOutOfRange(GPIOLineReference, lineCount: UInt32)
    /// Another consumer (a second agent, a kernel driver, a device-tree overlay) holds the line.
    case lineBusy(GPIOLineReference, consumer: String?)
    /// The kernel refused the flags, e.g. bias settings on kernels before 5.5.
    case requestRejected(GPIOLineReference, errno: Errno)
    /// Reading or setting a requested line failed.
    case ioFailed(GPIOLineReference, operation: String, errno: Errno)
    /// The line was released (shutdown) and must not be used any more.
    case released(GPIOLineReference)

    public var description: String {
        switch self {
        case .chipNotFound(let chip, let role):
            return "\(role): GPIO chip with \(chip) not found (check the board file; `gpiodetect` lists chips)"
        case .chipUnavailable(let chip, let role, let errno):
            return "\(role): GPIO chip with \(chip) cannot be opened: \(errno)"
        case .lineOutOfRange(let line, let count):
            return "\(line): offset out of range, the chip has \(count) lines (0...\(max(count, 1) - 1))"
        case .lineBusy(let line, let consumer):
            return "\(line): line busy, in use by \(consumer.map { "\"\($0)\"" } ?? "another consumer")"
        case .requestRejected(let line, let errno):
            return "\(line): request rejected by the kernel: \(errno)"
        case .ioFailed(let line, let operation, let errno):
            return "\(line): \(operation) failed: \(errno)"
        case .released(let line):
            return "\(line): line already released"
        }
    }
}
