// The console's output queue on a descriptor that is blocking after all (stdout when the
// console could not reopen it non-blocking): written only when poll(2) says writable, at most
// 4096 bytes at a time, so a pipe nobody reads never makes the loop wait.
import XCTest
@testable import Drivers
#if canImport(Glibc)
import Glibc
#endif

final class BoundedOutputBlockingTests: XCTestCase {
    private var ends: [Int32] = [-1, -1]

    override func setUp() {
        XCTAssertEqual(pipe(&ends), 0)
        // Without the poll before each write this test would hang in write(2): the alarm turns
        // a hang into a failure (killed by SIGALRM) instead of a stuck run. Not a timing check.
        alarm(120)
    }

    override func tearDown() {
        alarm(0)
        close(ends[0])
        close(ends[1])
    }

    private func setNonBlocking(_ fd: Int32, _ on: Bool) {
        let flags = fcntl(fd, F_GETFL)
        _ = fcntl(fd, F_SETFL, on ? flags | O_NONBLOCK : flags & ~O_NONBLOCK)
    }

    /// Fills the pipe (non-blocking for a moment), then makes its write end blocking again.
    private func fillPipe() {
        setNonBlocking(ends[1], true)
        let chunk = [UInt8](repeating: 0x41, count: 4096)
        while write(ends[1], chunk, chunk.count) > 0 {}
        setNonBlocking(ends[1], false)
    }

    func testAFullBlockingPipeIsNotWaitedOn() throws {
        fillPipe()
        var queue = BoundedOutput(capacity: 16 * 1024)
        XCTAssertEqual(queue.enqueue(Array("an answer nobody reads\n".utf8)), .queued)
        XCTAssertEqual(try queue.flush(to: FileDescriptor(rawValue: ends[1])), 0)
        XCTAssertEqual(queue.pendingCount, 23, "kept for later, not written")
    }

    func testABlockingPipeWithRoomGetsEverythingInSmallWrites() throws {
        var queue = BoundedOutput(capacity: 16 * 1024)
        let line = Array((String(repeating: "x", count: 99) + "\n").utf8)
        for _ in 0..<100 { queue.enqueue(line) }
        XCTAssertEqual(try queue.flush(to: FileDescriptor(rawValue: ends[1])), 10_000)
        XCTAssertTrue(queue.isEmpty)
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        XCTAssertEqual(read(ends[0], &buffer, buffer.count), 10_000)
    }
}
