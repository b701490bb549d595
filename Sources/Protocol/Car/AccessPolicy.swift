// The two authorisation questions, kept apart from message handling so they read like the
// spec: may this key be used now, and may it send this command.

enum AccessPolicy {
    /// Revocation first (a revoked key is reported as such even with a broken clock), then the
    /// validity window, which is only meaningful on a trusted clock: fail closed otherwise.
    static func checkUsable(_ record: KeyRecord, now: ProtocolTime) throws(FaultCode) {
        if record.revoked { throw .revoked }
        guard record.hasValidityWindow else { return }
        guard now.wallClockTrusted else { throw .clockNotTrusted }
        if record.notBefore != KeyRecord.noNotBefore, now.wallSeconds < Int64(record.notBefore) { throw .notYetValid }
        if record.notAfter != KeyRecord.noNotAfter, now.wallSeconds > Int64(record.notAfter) { throw .expired }
    }

    /// Unlock, lock and trunk need their bit; status and userVerified need any usable key.
    static func checkPermitted(_ command: CommandCode, _ record: KeyRecord) throws(FaultCode) {
        if let needed = command.requiredPermission, !record.permissions.contains(needed) {
            throw .insufficientPermission
        }
    }
}
