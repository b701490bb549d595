// `carkey-agent keys` output: one row per key (never key material), the kept revocations, and
// the rows that were not used because they failed authentication.
import Drivers
import Protocol

enum KeyListingFormat {
    static func text(_ loaded: LoadedKeychain) -> [String] {
        let keychain = loaded.keychain
        var untrusted = false
        func time(_ seconds: UInt32, trusted: Bool, none: UInt32 = 0) -> String {
            guard seconds != none else { return "-" }
            if !trusted { untrusted = true }
            return ISO8601.format(Int64(seconds)) + (trusted ? "" : "*")
        }
        let rows = keychain.listing.map { entry -> [String] in
            let record = entry.record
            return [
                record.keyID.description, record.role.description, KeyDescription.permissions(record),
                record.notBefore == KeyRecord.noNotBefore ? "-" : ISO8601.format(Int64(record.notBefore)),
                record.notAfter == KeyRecord.noNotAfter ? "-" : ISO8601.format(Int64(record.notAfter)),
                entry.activity.map { time($0.lastUsedAt, trusted: $0.lastUseTrusted) } ?? "-",
                entry.activity.map { String($0.useCount) } ?? "0",
                record.revoked ? "revoked" : "active",
            ]
        }
        var out = rows.isEmpty ? ["no keys enrolled (carkey-agent pair opens the pairing window)"]
            : TextTable.render(header: ["KEY ID", "ROLE", "PERMISSIONS", "VALID FROM", "VALID UNTIL", "LAST USE", "USES", "STATE"], rows: rows)
        if untrusted { out.append("* taken while the car clock was not trusted") }
        out.append("\(keychain.activeKeyCount) active key(s): \(keychain.ownerCount) owner, "
                   + "\(keychain.activeKeyCount - keychain.ownerCount) shared; \(keychain.listing.count - keychain.activeKeyCount) revoked")
        for entry in keychain.revocationEntries {
            out.append("revocation \(entry.target) by \(entry.revocation.issuerKeyID), applied \(ISO8601.format(Int64(entry.appliedAt)))"
                       + (entry.appliedAtTrusted ? "" : "*"))
        }
        for record in loaded.skipped {
            out.append("NOT USED: \(record.kind) record \(record.id.hexString) "
                       + (record.reason == .tampered ? "failed authentication (tampered; see carkey-agent events)" : "\(record)"))
        }
        return out
    }

    static func json(_ loaded: LoadedKeychain) -> JSONValue {
        let keychain = loaded.keychain
        func time(_ seconds: UInt32, none: UInt32) -> JSONValue { seconds == none ? .null : .string(ISO8601.format(Int64(seconds))) }
        let keys = keychain.listing.map { entry -> JSONValue in
            let record = entry.record
            var fields: [(String, JSONValue)] = [
                ("keyID", .string(record.keyID.description)), ("role", .string(record.role.description)),
                ("permissions", .array(permissionNames(record.permissions).map(JSONValue.string))),
                ("level", PermissionLevel(permissions: record.permissions).map { .string($0.name) } ?? .null),
                ("notBefore", time(record.notBefore, none: KeyRecord.noNotBefore)),
                ("notAfter", time(record.notAfter, none: KeyRecord.noNotAfter)),
                ("revoked", .bool(record.revoked)),
                ("share", record.share.map { .object([("serial", .string($0.serial.description)), ("issuer", .string($0.issuer.description))]) } ?? .null),
            ]
            let activity = entry.activity
            fields += [
                ("enrolledAt", activity.map { time($0.enrolledAt, none: 0) } ?? .null),
                ("enrolledAtTrusted", .bool(activity?.enrolledAtTrusted ?? false)),
                ("lastUsedAt", activity.map { time($0.lastUsedAt, none: 0) } ?? .null),
                ("lastUseTrusted", .bool(activity?.lastUseTrusted ?? false)),
                ("useCount", .integer(Int64(activity?.useCount ?? 0))),
            ]
            return .object(fields)
        }
        let revocations = keychain.revocationEntries.map { entry -> JSONValue in
            let target: (String, String)
            switch entry.target {
            case .serial(let serial): target = ("serial", serial.description)
            case .key(let keyID): target = ("key", keyID.description)
            }
            return .object([("targetKind", .string(target.0)), ("target", .string(target.1)),
                            ("issuer", .string(entry.revocation.issuerKeyID.description)),
                            ("issuedAt", .string(ISO8601.format(Int64(entry.revocation.issuedAt)))),
                            ("appliedAt", .string(ISO8601.format(Int64(entry.appliedAt)))), ("appliedAtTrusted", .bool(entry.appliedAtTrusted))])
        }
        let skipped = loaded.skipped.map { record -> JSONValue in
            let reason: String
            switch record.reason {
            case .tampered: reason = "tampered"
            case .undecodable(let why): reason = "unreadable: " + why
            }
            return .object([("kind", .string(record.kind.rawValue)), ("id", .string(record.id.hexString)), ("reason", .string(reason))])
        }
        return .object([("keys", .array(keys)), ("revocations", .array(revocations)), ("notUsed", .array(skipped))])
    }

    static func permissionNames(_ permissions: Permissions) -> [String] {
        let names: [(Permissions, String)] = [(.unlock, "unlock"), (.lock, "lock"), (.trunk, "trunk"), (.remote, "remote"), (.manage, "manage")]
        return names.filter { permissions.contains($0.0) }.map(\.1)
    }
}
