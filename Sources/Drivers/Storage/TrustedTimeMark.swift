// The persisted trusted-time high-water mark: the latest wall-clock time (seconds since 1970)
// the car has seen from a trusted source. It only moves forward; an older value is ignored
// (by the upsert below, and by a trigger for anything else that writes the table).

enum TrustedTimeMark {
    static func current(_ connection: Connection) throws -> Int64? {
        guard case .integer(let seconds)? = try connection.scalar("SELECT seconds FROM trusted_time WHERE id = 1") else { return nil }
        return seconds
    }

    /// Raises the mark to `seconds` if that is later; returns the mark in force afterwards.
    static func advance(to seconds: Int64, connection: Connection) throws -> Int64 {
        try connection.run("""
            INSERT INTO trusted_time (id, seconds) VALUES (1, ?1)
            ON CONFLICT (id) DO UPDATE SET seconds = excluded.seconds WHERE excluded.seconds > trusted_time.seconds
            """, [.integer(seconds)])
        return try current(connection) ?? seconds
    }
}
