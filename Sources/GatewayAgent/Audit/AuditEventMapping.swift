// Turns the engine's audit records into event-log rows. Only IDs, names and results: the key ID
// is a public lookup handle; no key material, plaintext or command arguments ever reach here.
import Drivers
import Protocol

enum AuditEventMapping {
    /// `suppressed`: like records left out of the log before this one (AuditSink).
    static func event(for record: AuditRecord, suppressed: Int = 0) -> NewEvent {
        let extra = suppressed > 0 ? #","suppressed":\#(suppressed)"# : ""
        return NewEvent(kind: kind(record),
                        time: EventTime(seconds: record.wallSeconds, trusted: record.wallClockTrusted),
                        actor: record.keyID?.bytes.hexString,
                        action: action(record),
                        result: result(record),
                        fault: record.fault.map { EventFault(code: Int64($0.rawValue), name: $0.name) },
                        detailJSON: #"{"event":"\#(record.event.rawValue)","link":\#(link(record.link))\#(extra)}"#)
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

    /// A summary row for `count` refusals with `fault` that were not written one by one.
    static func suppressedRefusals(_ count: Int, fault: FaultCode, now: ProtocolTime) -> NewEvent {
        NewEvent(kind: .accessDecision, time: EventTime(seconds: now.wallSeconds, trusted: now.wallClockTrusted),
                 action: "message", result: "refused", fault: EventFault(code: Int64(fault.rawValue), name: fault.name),
                 detailJSON: #"{"event":"rejected","suppressed":\#(count)}"#)
    }

    /// The command when there is one; otherwise what the record is about.
    static func action(_ record: AuditRecord) -> String {
        if let command = record.command { return command.name }
        switch record.event {
        case .sessionEstablished, .sessionClosed: return "session"
        case .rejected, .commandCompleted, .completionDropped: return "message"
        case .pairingWindowOpened, .pairingWindowClosed: return "pairing"
        case .ownerEnrolled: return "enroll"
        case .revocationApplied: return "revoke"
        }
    }

    static func result(_ record: AuditRecord) -> String {
        switch record.event {
        case .sessionEstablished: return "established"
        case .rejected: return "refused"
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
