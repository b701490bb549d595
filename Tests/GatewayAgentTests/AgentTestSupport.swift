// Temporary folders and small helpers for the in-process agent tests.
import XCTest
import Drivers
@testable import carkey_agent
#if canImport(Glibc)
import Glibc
#endif

enum AgentTestSupport {
    static func temporaryDirectory() -> String {
        var template = Array("/tmp/opencarkey-agent-test-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { fatalError("mkdtemp") }
        return String(cString: made)
    }

    /// Removes a test folder tree (lstat first: no symlink is followed).
    static func removeTree(_ path: String) {
        var info = stat()
        guard lstat(path, &info) == 0 else { return }
        if (info.st_mode & S_IFMT) == S_IFDIR, let dir = opendir(path) {
            while let entry = readdir(dir) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                    String(cString: raw.bindMemory(to: CChar.self).baseAddress!)
                }
                if name != "." && name != ".." { removeTree(path + "/" + name) }
            }
            closedir(dir)
            rmdir(path)
        } else {
            unlink(path)
        }
    }
}
