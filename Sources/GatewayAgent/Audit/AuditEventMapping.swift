// Turns the engine's audit records into event-log rows. Only IDs, names and results: the key ID
// is a public lookup handle; no key material, plaintext or command arguments ever reach here.
import Drivers
import Protocol

enum AuditEventMapping {
    static func event(for record: AuditRecord) -> NewEvent {
        NewEvent(kind: kind(record),
                        time: EventTime(seconds: record.wallSeconds, trusted: record.wallClockTrusted),
                        actor: record.keyID?.bytes.hexString,
                        action: action(record),
                        result: result(record),
                        fault: record.fault.map { EventFault(code: Int64($0.rawValue), name: $0.name) },
                        detailJSON: #"{"event":"\#(record.event.rawValue)","link":\#(link(record.link))}"#)
    }

    /// Pairing-window events belong with enrollments; everything else is an access decision.
    static func kind(_ record: AuditRecord) -> EventKind {
        switch record.event {
        case .pairingWindowOpened, .pairingWindowClosed, .ownerEnrolled: return .enrollment
        case .revocationApplied: return .revocation
        default: return .accessDecision
        }
    }

    /// The link as JSON: its number, or "car" for what the car started itself.
    static func link(_ link: LinkID) -> String {
        link == .car ? #""car""# : "\(link.rawValue)"
    }

    /// The row for records AuditCoalescer counted instead of writing: for the car-wide
    /// rateLimited bucket a refusal row with the count; for a key, a `coalesced` row with the
    /// count of each kind folded during its window.
    static func summary(_ summary: AuditCoalescer.Summary, time: EventTime) -> NewEvent {
        let counts = summary.counts
        switch summary.scope {
        case .rateLimited:
            let fault = FaultCode.rateLimited
            return NewEvent(kind: .accessDecision, time: time, action: .message, result: "refused",
                            fault: EventFault(code: Int64(fault.rawValue), name: fault.name),
                            detailJSON: #"{"event":"rejected","suppressed":\#(counts.total)}"#)
        case .key(let keyID):
            return NewEvent(kind: .accessDecision, time: time, actor: keyID?.bytes.hexString, action: .session, result: "coalesced",
                            detailJSON: #"{"event":"coalesced","suppressed":\#(counts.total),"windowSeconds":\#(summary.windowMillis / 1000),"#
                                + #""sessionEstablished":\#(counts.sessionsEstablished),"sessionClosed":\#(counts.sessionsClosed),"#
                                + #""commands":\#(counts.commands),"refused":\#(counts.refusals)}"#)
        }
    }

    /// The command when there is one; otherwise what the record is about.
    static func action(_ record: AuditRecord) -> EventAction {
        if let command = record.command { return .command(command) }
        switch record.event {
        case .sessionEstablished, .sessionClosed: return .session
        case .rejected, .commandAccepted, .commandCompleted, .completionDropped: return .message
        case .pairingWindowOpened, .pairingWindowClosed: return .pairing
        case .ownerEnrolled: return .enroll
        case .revocationApplied: return .revoke
        }
    }

    static func result(_ record: AuditRecord) -> String {
        switch record.event {
        case .sessionEstablished: return "established"
        case .rejected: return "refused"
        case .commandAccepted: return "accepted"
        case .commandCompleted: return record.fault == nil ? "ok" : "failed"
        case .sessionClosed: return "closed"
        case .completionDropped: return "dropped"
        case .pairingWindowOpened: return "opened"
        case .pairingWindowClosed: return "closed"
        case .ownerEnrolled: return "enrolled"
        case .revocationApplied: return "revoked"
        }
    }
}
