// Where each KeychainChange lives in the store (docs/protocol.md section 18.8): one sealed row
// per key, share, revocation and key activity, the record's own ID as the row ID.
import Drivers
import Protocol

extension StoreTransaction {
    func persist(_ changes: [KeychainChange]) throws {
        for change in changes {
            switch change {
            case .putKey(let record):
                try put(record.storedBytes(), kind: .key, id: record.keyID.bytes)
            case .putShare(let serial, let certificate):
                try put(certificate, kind: .share, id: serial.bytes)
            case .putRevocation(let entry):
                try put(entry.storedBytes(), kind: .revocation, id: entry.target.storageID)
            case .putActivity(let activity):
                try put(activity.storedBytes(), kind: .keyActivity, id: activity.keyID.bytes)
            }
        }
    }
}
