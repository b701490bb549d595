// One-call conveniences over `write`/`read`, each its own transaction. Combine operations that
// must happen together (a revocation and its event) in one `write` instead.
import Protocol

extension CarStore {
    public func put(_ payload: Bytes, kind: RecordKind, id: Bytes) throws(StorageError) { try StorageError.wrap {
            try write { try $0.put(payload, kind: kind, id: id) }
        }
    }

    /// The payload, nil when absent; throws `StorageError.tampered` (and reports it) when the
    /// row fails authentication.
    public func get(kind: RecordKind, id: Bytes) throws(StorageError) -> Bytes? { try StorageError.wrap {
            try read { try $0.get(kind: kind, id: id) }
        }
    }

    @discardableResult
    public func delete(kind: RecordKind, id: Bytes) throws(StorageError) -> Bool { try StorageError.wrap {
            try write { try $0.delete(kind: kind, id: id) }
        }
    }

    public func list(kind: RecordKind) throws(StorageError) -> RecordListing { try StorageError.wrap {
            try read { try $0.list(kind: kind) }
        }
    }

    @discardableResult
    public func appendEvent(_ event: NewEvent) throws(StorageError) -> StoredEvent { try StorageError.wrap {
            try write { try $0.appendEvent(event) }
        }
    }

    /// Events with seq > `since` (0 = from the start), oldest first, at most `limit`.
    public func events(since: Int64 = 0, limit: Int = 1000) throws(StorageError) -> [StoredEvent] { try StorageError.wrap {
            try read { try $0.events(since: since, limit: limit) }
        }
    }

    public func lastEventSequence() throws(StorageError) -> Int64 { try StorageError.wrap {
            try read { try $0.lastEventSequence() }
        }
    }

    public func markEventsPublished(through seq: Int64) throws(StorageError) { try StorageError.wrap {
            try write { try $0.markEventsPublished(through: seq) }
        }
    }

    @discardableResult
    public func trimEvents(keepingLatest keep: Int) throws(StorageError) -> Int { try StorageError.wrap {
            try write { try $0.trimEvents(keepingLatest: keep) }
        }
    }

    public func trustedTime() throws(StorageError) -> Int64? { try StorageError.wrap {
            try read { try $0.trustedTime() }
        }
    }

    @discardableResult
    public func advanceTrustedTime(to seconds: Int64) throws(StorageError) -> Int64 { try StorageError.wrap {
            try write { try $0.advanceTrustedTime(to: seconds) }
        }
    }

    /// PRAGMA integrity_check; ["ok"] when healthy.
    public func integrityCheck() throws(StorageError) -> [String] { try StorageError.wrap { try database.integrityCheck() } }
}
