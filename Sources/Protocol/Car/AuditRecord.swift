// One access decision for the event log: who (key), what (event, command), result (fault or ok),
// when (both clocks). Never contains key material, pairing codes or plaintext arguments.

public struct AuditRecord: Sendable, Equatable, CustomStringConvertible {
    public enum Event: String, Sendable, CaseIterable {
        /// A handshake completed and a session exists.
        case sessionEstablished
        /// A message was refused; `fault` says why.
        case rejected
        /// A command that moves an actuator passed every check and is about to be carried out.
        /// Emitted just before its `perform`, so the host can make the decision durable before
        /// the actuator moves (the outcome follows as `commandCompleted`).
        case commandAccepted
        /// The agent completed a command; `fault` is nil on success.
        case commandCompleted
        /// A session ended (expiry, termination by revocation, counter exhaustion).
        case sessionClosed
        /// `complete` was called for a command whose session is gone; nothing was sent.
        case completionDropped
        /// A pairing window opened (no link: the car did it).
        case pairingWindowOpened
        /// A pairing window closed: `fault` nil when its code was used, `pairingClosed` when it
        /// expired or was cancelled, `wrongPairingCode` after too many wrong codes.
        case pairingWindowClosed
        /// An owner key was enrolled through the pairing window; `keyID` is the new key.
        case ownerEnrolled
        /// A revocation was applied; `keyID` is the issuer, `target` what it revoked.
        case revocationApplied
    }

    public let event: Event
    /// `LinkID.car` for events the car itself started (pairing window).
    public let link: LinkID
    public let keyID: KeyID?
    public let command: CommandCode?
    public let fault: FaultCode?
    /// What a revocation named.
    public let target: RevocationTarget?
    public let monotonicMillis: UInt64
    public let wallSeconds: Int64
    public let wallClockTrusted: Bool

    init(_ event: Event, link: LinkID, keyID: KeyID?, command: CommandCode? = nil, fault: FaultCode? = nil,
         target: RevocationTarget? = nil, now: ProtocolTime) {
        self.event = event
        self.link = link
        self.keyID = keyID
        self.command = command
        self.fault = fault
        self.target = target
        self.monotonicMillis = now.monotonicMillis
        self.wallSeconds = now.wallSeconds
        self.wallClockTrusted = now.wallClockTrusted
    }

    public var description: String {
        var parts = [event.rawValue, link.description, "key=\(keyID?.description ?? "-")"]
        if let command { parts.append("command=\(command)") }
        if let target { parts.append("target=\(target)") }
        parts.append("result=\(fault?.name ?? "ok")")
        return parts.joined(separator: " ")
    }
}
