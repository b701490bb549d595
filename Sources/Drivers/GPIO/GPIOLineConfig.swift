// What one board role is wired to: which chip, which line, and how the line is electrically used.

/// Outputs the gateway drives. Lock, unlock and trunk release are pulsed actuators.
public enum OutputRole: String, CaseIterable, Sendable, Comparable {
    case lock, unlock, trunkRelease, feedbackLight

    /// Roles a board file must define; the feedback light is optional.
    public static let required: [OutputRole] = [.lock, .unlock, .trunkRelease]

    public static func < (lhs: OutputRole, rhs: OutputRole) -> Bool { lhs.order < rhs.order }
    private var order: Int { OutputRole.allCases.firstIndex(of: self) ?? 0 }
}

/// Inputs the gateway reads. Lock-state feedback is optional (not every actuator has a switch).
public enum InputRole: String, CaseIterable, Sendable, Comparable {
    /// `doorHandle`: the handle's touch or pull switch, for passive entry (optional).
    case doorOpen, trunkOpen, lockState, pairingButton, doorHandle

    public static let required: [InputRole] = [.doorOpen, .trunkOpen, .pairingButton]

    public static func < (lhs: InputRole, rhs: InputRole) -> Bool { lhs.order < rhs.order }
    private var order: Int { InputRole.allCases.firstIndex(of: self) ?? 0 }
}

/// Internal pull resistor setting. `asIs` leaves whatever firmware or device tree configured.
public enum LineBias: String, CaseIterable, Sendable {
    case disabled
    case pullUp = "pull-up"
    case pullDown = "pull-down"
    case asIs = "as-is"
}

/// Output stage. Open-drain suits wired-OR buses and 5 V pulled-up module inputs via a resistor.
public enum LineDrive: String, CaseIterable, Sendable {
    case pushPull = "push-pull"
    case openDrain = "open-drain"
    case openSource = "open-source"
}

/// How a chip is found. Labels survive kernel renumbering (the Pi 5 RP1 moved from gpiochip4 to
/// gpiochip0 in 2024), so board files should prefer them.
public enum GPIOChipAddress: Sendable, Hashable, CustomStringConvertible {
    /// A device path such as /dev/gpiochip0.
    case path(String)
    /// A device name such as gpiochip0 (libgpiod prepends /dev/).
    case name(String)
    /// The chip's label as printed by gpiodetect, such as pinctrl-rp1.
    case label(String)

    /// Classifies a board-file string: "/dev/..." is a path, "gpiochipN" a name, anything else a label.
    public init(_ text: String) {
        if text.hasPrefix("/dev/") {
            self = .path(text)
        } else if text.hasPrefix("gpiochip"), text.count > 8, text.dropFirst(8).allSatisfy({ $0.isASCII && $0.isNumber }) {
            self = .name(text)
        } else {
            self = .label(text)
        }
    }

    public var text: String {
        switch self {
        case .path(let value), .name(let value), .label(let value): return value
        }
    }

    public var description: String {
        switch self {
        case .path(let value): return "path \(value)"
        case .name(let value): return "name \(value)"
        case .label(let value): return "label \(value)"
        }
    }
}

/// One role's wiring. Values in the API are logical ("active"); `activeLow` maps them to levels.
public struct GPIOLineConfig: Sendable, Hashable {
    public var chip: String
    public var line: UInt32
    public var activeLow: Bool
    public var bias: LineBias
    /// Only meaningful for outputs; inputs are always parsed as push-pull (unused).
    public var drive: LineDrive

    public init(chip: String, line: UInt32, activeLow: Bool = false, bias: LineBias = .asIs, drive: LineDrive = .pushPull) {
        self.chip = chip
        self.line = line
        self.activeLow = activeLow
        self.bias = bias
        self.drive = drive
    }

    public var chipAddress: GPIOChipAddress { GPIOChipAddress(chip) }
}
