// FileDescriptor.pipe and the fcntl wrappers: the flags each end really carries (read back with
// fcntl(2), not through the wrapper under test), and non-blocking reads that tell "empty" from
// "closed".
#if canImport(Glibc)
import Glibc
#endif
import Drivers
import XCTest

final class SystemPipeTests: XCTestCase {
    private func flags(_ fd: FileDescriptor) -> (nonBlocking: Bool, closeOnExec: Bool) {
        (fcntl(fd.rawValue, F_GETFL) & O_NONBLOCK != 0, fcntl(fd.rawValue, F_GETFD) & FD_CLOEXEC != 0)
    }

    func testNonBlockingPipeHasBothFlagsOnBothEnds() throws {
        let ends = try FileDescriptor.pipe(nonBlocking: true)
        defer { ends.readEnd.close(); ends.writeEnd.close() }
        for end in [ends.readEnd, ends.writeEnd] {
            XCTAssertTrue(flags(end).nonBlocking, "O_NONBLOCK on fd \(end.rawValue)")
            XCTAssertTrue(flags(end).closeOnExec, "FD_CLOEXEC on fd \(end.rawValue)")
        }
    }

    func testBlockingPipeIsStillCloseOnExecUnlessAsked() throws {
        let blocking = try FileDescriptor.pipe(nonBlocking: false)
        defer { blocking.readEnd.close(); blocking.writeEnd.close() }
        XCTAssertFalse(flags(blocking.readEnd).nonBlocking)
        XCTAssertTrue(flags(blocking.readEnd).closeOnExec)
        let inheritable = try FileDescriptor.pipe(nonBlocking: false, closeOnExec: false)
        defer { inheritable.readEnd.close(); inheritable.writeEnd.close() }
        XCTAssertFalse(flags(inheritable.writeEnd).closeOnExec)
    }

    func testNonBlockingReadTellsEmptyFromDataFromClosed() throws {
        let ends = try FileDescriptor.pipe(nonBlocking: true)
        defer { ends.readEnd.close() }
        // Guard: on a blocking pipe the next read would hang the test instead of failing it.
        try XCTSkipUnless(flags(ends.readEnd).nonBlocking, "covered by testNonBlockingPipeHasBothFlagsOnBothEnds")
        XCTAssertEqual(try ends.readEnd.readNonBlocking(upTo: 8), .wouldBlock)
        XCTAssertTrue(ends.writeEnd.writeWakeByte(7))
        XCTAssertEqual(try ends.readEnd.readNonBlocking(upTo: 8), .data([7]))
        ends.writeEnd.close()
        XCTAssertEqual(try ends.readEnd.readNonBlocking(upTo: 8), .closed)
    }

    func testWakeByteOnAFullPipeFailsQuietlyAndKeepsErrno() throws {
        let ends = try FileDescriptor.pipe(nonBlocking: true)
        defer { ends.readEnd.close(); ends.writeEnd.close() }
        try XCTSkipUnless(flags(ends.writeEnd).nonBlocking, "a blocking pipe would hang here")
        var written = 0
        while ends.writeEnd.writeWakeByte(1) { written += 1 }
        XCTAssertGreaterThan(written, 0)
        errno = 12_345
        XCTAssertFalse(ends.writeEnd.writeWakeByte(1))
        XCTAssertEqual(errno, 12_345, "a signal handler's caller must see its own errno")
    }

    func testSetNonBlockingTurnsTheFlagOffAgain() throws {
        let ends = try FileDescriptor.pipe(nonBlocking: true)
        defer { ends.readEnd.close(); ends.writeEnd.close() }
        try ends.readEnd.setNonBlocking(false)
        XCTAssertFalse(flags(ends.readEnd).nonBlocking)
        XCTAssertTrue(flags(ends.readEnd).closeOnExec, "other flags untouched")
        try ends.readEnd.setNonBlocking(true)
        XCTAssertTrue(flags(ends.readEnd).nonBlocking)
    }

    func testFlagsOnAClosedDescriptorAreATypedError() throws {
        let ends = try FileDescriptor.pipe(nonBlocking: false)
        ends.readEnd.close()
        ends.writeEnd.close()
        do throws(Errno) {
            try ends.readEnd.setNonBlocking(true)
            XCTFail("fcntl on a closed descriptor succeeded")
        } catch {
            XCTAssertEqual(error.rawValue, EBADF)
        }
    }
}
