// Temporary folders for tests: made with mkdtemp, removed without following symlinks.
#if canImport(Glibc)
import Glibc
#endif
import Drivers

public enum TestFolders {
    /// A new private folder under /tmp, e.g. /tmp/opencarkey-test-Ab12Cd.
    public static func make(prefix: String = "opencarkey-test") -> String {
        var template = Array("/tmp/\(prefix)-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { fatalError("mkdtemp failed: errno \(errno)") }
        return String(cString: made)
    }

    /// Removes a folder tree made by a test (lstat first: a symlink is removed, not followed;
    /// folders a test made read-only are opened up first).
    public static func remove(_ path: String) {
        var info = stat()
        guard lstat(path, &info) == 0 else { return }
        if (info.st_mode & S_IFMT) == S_IFDIR {
            chmod(path, 0o700)
            if let dir = opendir(path) {
                var names: [String] = []
                while let entry = readdir(dir) {
                    let name = DirectoryEntry.name(entry)
                    if name != "." && name != ".." { names.append(name) }
                }
                closedir(dir)
                for name in names { remove(path + "/" + name) }
            }
            rmdir(path)
        } else {
            unlink(path)
        }
    }
}
