// What a state directory holds, file by file, for the "a refusal writes nothing" checks: two equal
// snapshots mean nothing was created, removed, renamed, written or touched.
#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Drivers
import Protocol

enum DirectorySnapshot {
    /// Every entry under `directory` (subfolders included, by relative path) -> its type, size,
    /// mtime in nanoseconds and, for regular files, the SHA-256 of the contents (a state
    /// directory holds megabytes: the store and its disk reserve).
    static func take(_ directory: String) throws -> [String: String] {
        var entries: [String: String] = [:]
        try add(directory, prefix: "", into: &entries)
        return entries
    }

    private static func add(_ directory: String, prefix: String, into entries: inout [String: String]) throws {
        for name in try FileManager.default.contentsOfDirectory(atPath: directory) {
            let path = directory + "/" + name
            var info = stat()
            guard lstat(path, &info) == 0 else { continue }
            let type = info.st_mode & S_IFMT
            let contents = type == S_IFREG ? SHA256.hash(try Files.read(path, limit: 1 << 26)).map { String(format: "%02x", $0) }.joined() : "-"
            entries[prefix + name] = "mode \(String(info.st_mode, radix: 8)) size \(info.st_size) "
                + "mtime \(info.st_mtim.tv_sec).\(info.st_mtim.tv_nsec) sha256 \(contents)"
            if type == S_IFDIR { try add(path, prefix: prefix + name + "/", into: &entries) }
        }
    }
}
