// The four SQLite storage classes we use, for typed binds and reads.
import Protocol

public enum SQLiteValue: Sendable, Equatable {
    case null
    case integer(Int64)
    case text(String)
    case blob(Bytes)
}
