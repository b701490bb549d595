// What an event says was attempted. Writers and the retention rules (EventRetention) name the
// same typed values, so a rule cannot match a spelling nobody writes: the action of a command
// is the protocol's own name for it, and every other action is a constant here.
import Protocol

public struct EventAction: Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String

    private init(_ rawValue: String) { self.rawValue = rawValue }

    /// A row read back from the store, whatever it holds.
    init(stored rawValue: String) { self.rawValue = rawValue }

    /// An action outside this vocabulary: for tests and tools that write rows of their own.
    /// The agent never uses it (SyscallLayerTests-style source check in EventRetentionTests),
    /// so retention can never meet a word it has no rule for by accident.
    public init(unlisted rawValue: String) { self.rawValue = rawValue }

    public var description: String { rawValue }

    /// A phone command, a console service test or a proximity decision about one.
    public static func command(_ code: CommandCode) -> EventAction { EventAction(code.name) }
    /// A pulse, in the words of the command that asks for it ("trunk" for trunkRelease).
    public static func actuation(_ actuation: Actuation) -> EventAction {
        switch actuation {
        case .lock: return .command(.lock)
        case .unlock: return .command(.unlock)
        case .trunkRelease: return .command(.trunkRelease)
        }
    }
    /// A remote command from the cloud.
    public static func remote(_ action: RemoteAction) -> EventAction { EventAction(action.description) }
    /// A debounced input change, e.g. "doorOpen".
    public static func input(_ role: InputRole) -> EventAction { EventAction(role.rawValue) }

    // Access decisions that are not one command.
    public static let session = EventAction("session")
    public static let message = EventAction("message")
    public static let pairing = EventAction("pairing")
    public static let enroll = EventAction("enroll")
    public static let revoke = EventAction(CommandCode.revoke.name)
    /// A remote command that could not be parsed far enough to know its action.
    public static let remoteCommand = EventAction("command")
    public static let passiveEntry = EventAction("passiveEntry")
    public static let walkAwayLock = EventAction("walkAwayLock")

    // The keychain and the cloud's key material.
    public static let enrollOwner = EventAction("enroll owner")
    public static let installShare = EventAction("install share")
    public static let fleetKey = EventAction("fleet-key")
    public static let revocationList = EventAction("revocation-list")
    public static let configUpdate = EventAction("config-update")

    // The console's service mode.
    public static let serviceOn = EventAction("service-on")
    public static let serviceOff = EventAction("service-off")

    // The store itself.
    public static let openSealedRecord = EventAction("open sealed record")
    public static let repairPermissions = EventAction("repair permissions")
    public static let repairSchema = EventAction("repair schema")
    public static let vaultMigrate = EventAction("vault migrate")
    public static let pruneEvents = EventAction("prune events")
    public static let diskFull = EventAction("disk full")

    /// Every constant above, and every action the factories can make: the vocabulary the
    /// retention tests classify one by one.
    public static var vocabulary: [EventAction] {
        [session, message, pairing, enroll, revoke, remoteCommand, passiveEntry, walkAwayLock, enrollOwner, installShare,
         fleetKey, revocationList, configUpdate, serviceOn, serviceOff, openSealedRecord, repairPermissions, repairSchema,
         vaultMigrate, pruneEvents, diskFull]
            + CommandCode.allCases.map(command) + Actuation.allCases.map(actuation)
            + RemoteAction.allCases.map(remote) + InputRole.allCases.map(input)
    }
}
