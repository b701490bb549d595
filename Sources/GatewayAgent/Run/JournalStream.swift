// Whether stderr goes to journald: systemd sets $JOURNAL_STREAM to "DEVICE:INODE" of the stream
// it connected; it only counts when stderr still is that stream (a child whose stderr was
// redirected to a file inherits the variable, and must not get priority prefixes in its file).
#if canImport(Glibc)
import Glibc
#endif

enum JournalStream {
    static let isStderr: Bool = {
        guard let value = getenv("JOURNAL_STREAM").map({ String(cString: $0) }) else { return false }
        let parts = value.split(separator: ":")
        guard parts.count == 2, let device = UInt64(parts[0]), let inode = UInt64(parts[1]) else { return false }
        var info = stat()
        guard fstat(2, &info) == 0 else { return false }
        return UInt64(info.st_dev) == device && UInt64(info.st_ino) == inode
    }()

    /// The sd-daemon(3) priority prefix journald turns into the entry's PRIORITY.
    static func prefix(_ level: LogLevel) -> String {
        switch level {
        case .debug: return "<7>"
        case .info: return "<6>"
        case .warn: return "<4>"
        case .error: return "<3>"
        }
    }
}
