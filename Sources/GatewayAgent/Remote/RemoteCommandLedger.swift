// The persisted table of remote-command UUIDs the car has decided on: what makes a command's
// effect exactly-once although MQTT delivers at least once (a retry, a second envelope around
// the same signed command, a replay by anyone who recorded it). Rows are sealed records (kind
// `remote-command`, ID = the 16-byte UUID, payload = expiresAt as UInt32 BE), written in the
// transaction that records the decision's event (and result), so a decision and its UUID are
// never apart. A row is pruned once the car's time (or, untrusted, the trusted-time mark) is
// past the command's expiry: after that the time check refuses it anyway. The table is bounded;
// when full of live rows the car refuses (busy) rather than forget a UUID that still matters.
import Drivers
import Protocol

enum RemoteCommandLedger {
    static let kind = RecordKind(rawValue: "remote-command")!
    static let capacity = 4096

    static func contains(_ commandID: Bytes, in transaction: StoreTransaction) throws -> Bool {
        try transaction.get(kind: kind, id: commandID) != nil
    }

    /// Records the UUID; false when it was already there (a duplicate).
    static func record(_ command: RemoteCommand, in transaction: StoreTransaction) throws -> Bool {
        guard try transaction.get(kind: kind, id: command.commandID) == nil else { return false }
        var payload: Bytes = []
        payload.appendBigEndian(command.expiresAt)
        try transaction.put(payload, kind: kind, id: command.commandID)
        return true
    }

    /// Deletes rows whose command expired before `before`; returns how many rows remain.
    @discardableResult
    static func prune(before seconds: Int64, in transaction: StoreTransaction) throws -> Int {
        let listing = try transaction.list(kind: kind)
        var remaining = listing.records.count
        for record in listing.records where record.payload.count == 4 {
            let expires = record.payload.reduce(Int64(0)) { $0 << 8 | Int64($1) }
            if expires < seconds {
                try transaction.delete(kind: kind, id: record.id)
                remaining -= 1
            }
        }
        return remaining
    }
}

extension Array where Element == UInt8 {
    fileprivate mutating func appendBigEndian(_ value: UInt32) {
        append(contentsOf: [UInt8(value >> 24), UInt8(value >> 16 & 0xff), UInt8(value >> 8 & 0xff), UInt8(value & 0xff)])
    }
}
