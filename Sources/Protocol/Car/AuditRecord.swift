// One access decision for the event log: who (key), what (event, command), result (fault or ok),
// when (both clocks). Never contains key material or plaintext arguments.

public struct AuditRecord: Sendable, Equatable, CustomStringConvertible {
    public enum Event: String, Sendable {
        /// A handshake completed and a session exists.
        case sessionEstablished
        /// A message was refused; `fault` says why.
        case rejected
        /// The agent completed a command; `fault` is nil on success.
        case commandCompleted
        /// A session ended (expiry, termination by revocation, counter exhaustion).
        case sessionClosed
        /// `complete` was called for a command whose session is gone; nothing was sent.
        case completionDropped
    }

    public let event: Event
    public let link: LinkID
    public let keyID: KeyID?
    public let command: CommandCode?
    public let fault: FaultCode?
    public let monotonicMillis: UInt64
    public let wallSeconds: Int64
    public let wallClockTrusted: Bool

    init(_ event: Event, link: LinkID, keyID: KeyID?, command: CommandCode? = nil, fault: FaultCode? = nil, now: ProtocolTime) {
        self.event = event
        self.link = link
        self.keyID = keyID
        self.command = command
        self.fault = fault
        self.monotonicMillis = now.monotonicMillis
        self.wallSeconds = now.wallSeconds
        self.wallClockTrusted = now.wallClockTrusted
    }

    public var description: String {
        var parts = [event.rawValue, link.description, "key=\(keyID?.description ?? "-")"]
        if let command { parts.append("command=\(command)") }
        parts.append("result=\(fault?.name ?? "ok")")
        return parts.joined(separator: " ")
    }
}
