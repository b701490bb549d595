// Which audit records deserve a line in the agent's log at the default level. Every record
// still goes to the event log (and the cloud); the log says what changed, so a phone coming,
// reading the status and going adds no line, while refusals, enrollments, revocations and
// failed commands do. Successful commands are logged by CarService with their outcome.

import Protocol

extension AuditRecord {
    var logLevel: LogLevel {
        switch event {
        case .sessionEstablished, .commandCompleted, .sessionClosed:
            // An ended session with a fault (revoked, counter exhausted) is news; a fault on a
            // command is already logged with its outcome, but one more line for it is cheap.
            return fault == nil ? .debug : .info
        case .commandAccepted:
            // The decision row that precedes a pulse: the pulse's outcome gets the log line.
            return .debug
        case .rejected, .completionDropped, .pairingWindowOpened, .pairingWindowClosed, .ownerEnrolled, .revocationApplied:
            return .info
        }
    }
}
