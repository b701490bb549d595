// Schema objects dropped while the store is open (a `DROP TABLE events` by someone with the
// sqlite3 shell while the agent runs): the agent's next audit write fails, the access decision
// it carried is refused (never actuated without its record), and this puts the structure back
// at once instead of leaving the car shut until a restart, with a `storeRepaired` event.
extension CarStore {
    /// Recreates missing tables, indexes and triggers (see StoreSchemaRepair); when it did, a
    /// `storage` event with result `storeRepaired` names them. Returns "type name" of each.
    @discardableResult
    public func repairMissingSchema() throws(StorageError) -> [String] { try StorageError.wrap {
            let recreated = try StoreSchemaRepair.repair(database, schema: StoreSchema.schema)
            guard !recreated.isEmpty else { return [] }
            try write { transaction in
                _ = try transaction.appendEvent(schemaRepairEvent(recreated))
            }
            return recreated
        }
    }

    func schemaRepairEvent(_ recreated: [String]) -> NewEvent {
        storageEvent(action: .repairSchema, detail: [("recreated", recreated.joined(separator: ","))], result: "storeRepaired")
    }
}
