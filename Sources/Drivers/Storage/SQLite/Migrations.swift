// Schema versioning: PRAGMA user_version counts applied migrations, PRAGMA application_id marks
// the file as ours. Migrations run in order, one transaction each, so a crash mid-upgrade leaves
// the last completed version. A database newer than the code is refused: never downgrade.

/// One schema step. Its version is its position in the list (the first migration is version 1).
public struct Migration: Sendable {
    public let name: String
    public let apply: @Sendable (Connection) throws -> Void

    public init(_ name: String, apply: @escaping @Sendable (Connection) throws -> Void) {
        self.name = name
        self.apply = apply
    }

    /// A migration made of SQL statements only.
    public init(_ name: String, sql: String) {
        self.init(name) { try $0.execute(sql) }
    }
}

public enum MigrationError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The file was written by newer code (`found` > `supported`); running would risk damage.
    case databaseNewerThanCode(found: Int32, supported: Int32)
    /// The file has a schema but belongs to another application.
    case foreignDatabase(applicationID: Int32)

    public var description: String {
        switch self {
        case .databaseNewerThanCode(let found, let supported):
            return "database schema version \(found) is newer than this program supports (\(supported)); refusing to run"
        case .foreignDatabase(let applicationID):
            return "not an OpenCarKey database (application_id \(applicationID))"
        }
    }
}

public struct Schema: Sendable {
    public let applicationID: Int32
    public let migrations: [Migration]

    public init(applicationID: Int32, migrations: [Migration]) {
        self.applicationID = applicationID
        self.migrations = migrations
    }

    public var latestVersion: Int32 { Int32(migrations.count) }
}

extension Database {
    /// Brings the file up to `schema.latestVersion`. Returns the version found before upgrading.
    /// Each step re-reads the version under the write lock, so two processes upgrading at once
    /// apply each migration exactly once.
    @discardableResult
    public func migrate(to schema: Schema) throws -> Int32 {
        var initial: Int32?
        while true {
            let done = try transaction { connection -> Bool in
                let version = try Self.userVersion(connection)
                if initial == nil { initial = version }
                guard version <= schema.latestVersion else {
                    throw MigrationError.databaseNewerThanCode(found: version, supported: schema.latestVersion)
                }
                if version > 0 {
                    let applicationID = try Self.applicationID(connection)
                    guard applicationID == schema.applicationID else {
                        throw MigrationError.foreignDatabase(applicationID: applicationID)
                    }
                }
                guard version < schema.latestVersion else { return true }
                if version == 0 {
                    // An empty file is ours to claim; one with tables but no version is not.
                    let tables = try connection.scalar("SELECT count(*) FROM sqlite_master")
                    guard tables == .integer(0) else {
                        throw MigrationError.foreignDatabase(applicationID: try Self.applicationID(connection))
                    }
                    try connection.execute("PRAGMA application_id = \(schema.applicationID)")
                }
                try schema.migrations[Int(version)].apply(connection)
                // PRAGMA values cannot be bound; the version is an integer we computed.
                try connection.execute("PRAGMA user_version = \(version + 1)")
                return false
            }
            if done { return initial ?? schema.latestVersion }
        }
    }

    /// The schema version recorded in the file (0 for a new file).
    public func schemaVersion() throws -> Int32 {
        try read { try Self.userVersion($0) }
    }

    private static func userVersion(_ connection: Connection) throws -> Int32 {
        guard case .integer(let value)? = try connection.scalar("PRAGMA user_version") else { return 0 }
        return Int32(truncatingIfNeeded: value)
    }

    private static func applicationID(_ connection: Connection) throws -> Int32 {
        guard case .integer(let value)? = try connection.scalar("PRAGMA application_id") else { return 0 }
        return Int32(truncatingIfNeeded: value)
    }
}
