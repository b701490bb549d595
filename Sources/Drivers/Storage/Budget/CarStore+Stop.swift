// The store at a clean stop: every commit copied from the WAL into carkey.db and the database
// closed, so carkey.db alone is the whole car (a cold copy of it is complete).
extension CarStore {
    /// Checkpoints and closes the store; afterwards any use of it throws. The WAL is truncated
    /// to 0 bytes, except when the next start could need its room: on a full disk with no
    /// reserve left to release (it was released in this run), a start that had to grow a
    /// truncated WAL could not commit an access decision, while a kept WAL file is rewritten
    /// from its start. Its frames are all in carkey.db either way.
    @discardableResult
    public func checkpointAndClose() throws(StorageError) -> Database.CheckpointResult { try StorageError.wrap {
            let keepWALRoom = space.map { $0.diskFull || ($0.budget.reserveBytes > 0 && !$0.reserve.isPresent) } ?? false
            return try database.checkpointAndClose(truncate: !keepWALRoom)
        }
    }
}
