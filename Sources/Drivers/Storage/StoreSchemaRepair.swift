// Puts back schema objects someone dropped from a store at the current version (a `DROP TABLE
// events` with the sqlite3 shell, a partial restore): without the events table every access
// decision would go unrecorded while the car kept working. The migrations are not idempotent
// (they ALTER and INSERT), so the reference is the schema they produce, built in a private
// in-memory database; whatever the store lacks of it is created from that SQL, tables before
// their indexes and triggers. Rows of a dropped table are gone: only the structure returns.
// An object that exists with a different definition is left alone (that is not a drop).
import CSQLite

enum StoreSchemaRepair {
    /// Recreates missing tables, indexes, triggers and views; returns "type name" of each.
    static func repair(_ database: Database, schema: Schema) throws -> [String] {
        let reference = try referenceObjects(schema)
        return try database.transaction { connection in
            let present = Set(try connection.rows("SELECT type, name FROM sqlite_master").compactMap { row -> String? in
                guard row.count == 2, case .text(let type) = row[0], case .text(let name) = row[1] else { return nil }
                return type + " " + name
            })
            var recreated = [String]()
            for object in reference where !present.contains(object.key) {
                try connection.execute(object.sql)
                recreated.append(object.key)
            }
            return recreated
        }
    }

    struct Object {
        let type: String
        let name: String
        let sql: String
        var key: String { type + " " + name }
    }

    /// The objects `schema` creates, tables first (indexes and triggers need their table).
    static func referenceObjects(_ schema: Schema) throws -> [Object] {
        let memory = try Connection(path: ":memory:", create: true)
        defer { memory.close() }
        try memory.execute("PRAGMA application_id = \(schema.applicationID)")
        for migration in schema.migrations { try migration.apply(memory) }
        let order = ["table": 0, "index": 1, "view": 2, "trigger": 3]
        return try memory.rows("SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'").compactMap { row -> Object? in
            guard row.count == 3, case .text(let type) = row[0], case .text(let name) = row[1], case .text(let sql) = row[2] else { return nil }
            return Object(type: type, name: name, sql: sql)
        }.sorted { (order[$0.type] ?? 9, $0.name) < (order[$1.type] ?? 9, $1.name) }
    }
}
