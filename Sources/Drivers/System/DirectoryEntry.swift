// The name of a readdir(3) entry, read in place. `entry.pointee.d_name` copies the whole
// 256-byte array out of the dirent, but readdir packs records by their real length
// (d_reclen), so for the last record in its buffer that copy reads past the allocation
// (AddressSanitizer, heap-buffer-overflow, found by make test-asan). Only the bytes up to the
// NUL are read here.
#if canImport(Glibc)
import Glibc
#endif

public enum DirectoryEntry {
    public static func name(_ entry: UnsafeMutablePointer<dirent>) -> String {
        let offset = MemoryLayout<dirent>.offset(of: \dirent.d_name)!
        return String(cString: (UnsafeRawPointer(entry) + offset).assumingMemoryBound(to: CChar.self))
    }
}
