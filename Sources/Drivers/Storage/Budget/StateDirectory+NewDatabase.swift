// auto_vacuum can only be chosen before the file's first page is written (after that only a
// full VACUUM changes it, which needs as much free space again as the database). So a new,
// still empty carkey.db gets auto_vacuum=INCREMENTAL before anything else touches it; an
// existing database keeps its mode and is bounded by freelist reuse alone (see StoreSpace).
#if canImport(Glibc)
import Glibc
#endif

extension StateDirectory {
    func setUpNewDatabaseFile() throws {
        guard let info = try Self.status(databasePath, followLinks: false), info.st_size == 0 else { return }
        let connection = try Connection(path: databasePath, create: false)
        try connection.execute("PRAGMA auto_vacuum = INCREMENTAL")
        // Writes page 1, which records the auto_vacuum mode (and WAL) for good.
        _ = try connection.scalar("PRAGMA journal_mode = WAL")
    }
}
