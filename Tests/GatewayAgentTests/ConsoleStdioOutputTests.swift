// `--console stdio` answers through a non-blocking description of stdout of its own: a pipe
// nobody reads must not block the agent's loop, and fd 1 (the shell's, the log's print())
// must keep its blocking flag.
import XCTest
import Drivers
@testable import carkey_agent
#if canImport(Glibc)
import Glibc
#endif

final class ConsoleStdioOutputTests: XCTestCase {
    func testTheConsoleGetsItsOwnNonBlockingStdout() throws {
        var info = stat()
        XCTAssertEqual(fstat(1, &info), 0)
        if info.st_mode & S_IFMT == S_IFREG { throw XCTSkip("stdout is a regular file here: used as it is by design") }
        if info.st_mode & S_IFMT == S_IFSOCK { throw XCTSkip("stdout is a socket here: the poll fallback applies") }
        let before = fcntl(1, F_GETFL)
        let output = ConsoleTransport.standardOutputForConsole()
        defer { if output.owned { output.descriptor.close() } }
        XCTAssertTrue(output.owned, "a pipe or terminal is reopened")
        XCTAssertNotEqual(output.descriptor.rawValue, 1)
        XCTAssertNotEqual(fcntl(output.descriptor.rawValue, F_GETFL) & O_NONBLOCK, 0, "the console's description never blocks")
        XCTAssertNotEqual(fcntl(output.descriptor.rawValue, F_GETFD) & FD_CLOEXEC, 0)
        XCTAssertEqual(fcntl(1, F_GETFL), before, "fd 1's own flags are untouched")
    }
}
