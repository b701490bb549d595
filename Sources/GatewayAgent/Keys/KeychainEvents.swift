// The audit events written in the same transaction as the keychain rows they describe. Only
// IDs, names, levels and times: never a public key, certificate or signature.
import Drivers
import Protocol

enum KeychainEvents {
    static func enrolled(_ record: KeyRecord, link: LinkID, alreadyEnrolled: Bool = false, now: ProtocolTime) -> NewEvent {
        NewEvent(kind: .enrollment, time: time(now), actor: record.keyID.bytes.hexString,
                 action: .enrollOwner, result: alreadyEnrolled ? "already enrolled" : "enrolled",
                 detailJSON: JSONValue.object([
                     ("link", linkValue(link)), ("role", .string(record.role.description)),
                     ("permissions", .string(record.permissions.description)),
                 ]).serialized)
    }

    static func shareInstalled(_ record: KeyRecord, link: LinkID, now: ProtocolTime) -> NewEvent {
        var detail: [(String, JSONValue)] = [("link", linkValue(link))]
        if let share = record.share {
            detail += [("serial", .string(share.serial.description)), ("issuer", .string(share.issuer.description))]
        }
        detail += [("permissions", .string(KeyDescription.permissions(record))),
                   ("notBefore", timeValue(record.notBefore, open: KeyRecord.noNotBefore)),
                   ("notAfter", timeValue(record.notAfter, open: KeyRecord.noNotAfter))]
        return NewEvent(kind: .share, time: time(now), actor: record.keyID.bytes.hexString,
                        action: .installShare, result: "installed", detailJSON: JSONValue.object(detail).serialized)
    }

    /// `carriedBy`: the session key that delivered it (nil from the cloud); `link` likewise.
    static func revoked(_ revocation: VerifiedRevocation, outcome: RevocationOutcome, carriedBy: KeyID?, link: LinkID?,
                        source: String, now: ProtocolTime) -> NewEvent {
        var detail: [(String, JSONValue)] = [("target", .string(revocation.target.description)), ("source", .string(source))]
        if let link { detail.append(("link", linkValue(link))) }
        if let carriedBy { detail.append(("carriedBy", .string(carriedBy.description))) }
        detail.append(("revokedKeys", .array(outcome.revokedKeys.map { .string($0.description) })))
        return NewEvent(kind: .revocation, time: time(now), actor: revocation.issuer.bytes.hexString,
                        action: .revoke, result: outcome.changes.isEmpty ? "already revoked" : "revoked",
                        detailJSON: JSONValue.object(detail).serialized)
    }

    static func time(_ now: ProtocolTime) -> EventTime {
        EventTime(seconds: now.wallSeconds, trusted: now.wallClockTrusted)
    }

    static func linkValue(_ link: LinkID) -> JSONValue {
        link == .car ? .string("car") : .integer(Int64(bitPattern: link.rawValue))
    }

    private static func timeValue(_ seconds: UInt32, open: UInt32) -> JSONValue {
        seconds == open ? .null : .string(ISO8601.format(Int64(seconds)))
    }
}

/// Names for a key's rights and window, shared by events, logs and `carkey-agent keys`.
enum KeyDescription {
    /// "all" for an owner's full set, the level name when one matches, else the bits.
    static func permissions(_ record: KeyRecord) -> String {
        if record.role == .owner, record.permissions == .all { return "all" }
        return PermissionLevel(permissions: record.permissions)?.name ?? record.permissions.description
    }
}
