// What the engine asks its host to do. The engine never performs IO; the agent executes these
// in order.

public enum CarAction: Sendable, Equatable {
    /// Write these bytes to the link's GATT characteristic (or simulated socket).
    case send(LinkID, Bytes)
    /// A phone completed the handshake.
    case authenticated(AccessGrant)
    /// Actuate a command, then call `CarProtocolEngine.complete(_:result:vehicleState:now:)`.
    case perform(CommandRequest)
    /// Append to the event log.
    case audit(AuditRecord)
    /// Disconnect the link; its protocol state is already gone.
    case closeLink(LinkID)
}

/// Identifies one accepted command between `.perform` and `complete`.
public struct CommandToken: Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt64
    public init(_ rawValue: UInt64) { self.rawValue = rawValue }
    public var description: String { "cmd#\(rawValue)" }
}

public struct CommandRequest: Sendable, Equatable {
    public let token: CommandToken
    public let link: LinkID
    public let keyID: KeyID
    public let command: CommandCode
    public let args: Bytes
}

/// An authenticated session: who, with what rights, until when.
public struct AccessGrant: Sendable, Equatable {
    public let link: LinkID
    public let keyID: KeyID
    public let record: KeyRecord
    /// The share certificate from Hello when the key was not in the directory: the holder has
    /// now proved possession, so the agent may remember the key (issue 4).
    public let presentedCertificate: Bytes?
    public let sessionLifetimeSeconds: UInt16
}
