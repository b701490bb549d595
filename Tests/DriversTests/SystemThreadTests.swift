// SystemThread: the body runs, under the given name (read back from the kernel), the join
// waits for it and happens once, and a thread that cannot be created is a typed error with
// the body never run.
#if canImport(Glibc)
import Glibc
#endif
import Drivers
import Synchronization
import XCTest

final class SystemThreadTests: XCTestCase {
    final class Record: Sendable {
        let name = Mutex<String?>(nil)
        let runs = Atomic<Int>(0)
    }

    func testBodyRunsUnderItsNameAndJoinWaitsForIt() throws {
        let record = Record()
        let thread = try SystemThread.start(name: "carkey-test") {
            // Still running when the joiner starts waiting, most of the time: the join must wait.
            SystemClock.sleep(nanoseconds: 20_000_000)
            record.name.withLock { $0 = SystemThread.currentName }
            record.runs.add(1, ordering: .releasing)
        }
        thread.join()
        XCTAssertEqual(record.runs.load(ordering: .acquiring), 1, "join returned before the body ended")
        XCTAssertEqual(record.name.withLock { $0 }, "carkey-test")
        XCTAssertEqual(thread.name, "carkey-test")
        thread.join() // a second join is a no-op, not undefined behaviour
    }

    func testLongNamesAreCutToTheKernelLimit() throws {
        let record = Record()
        let thread = try SystemThread.start(name: "a-name-longer-than-fifteen-bytes") {
            record.name.withLock { $0 = SystemThread.currentName }
        }
        thread.join()
        XCTAssertEqual(thread.name, "a-name-longer-t")
        XCTAssertEqual(record.name.withLock { $0 }, "a-name-longer-t")
    }

    func testAThreadThatCannotBeCreatedIsATypedErrorAndNeverRuns() {
        let record = Record()
        // A stack no machine can map: pthread_create's mmap fails (EAGAIN, or ENOMEM/EINVAL
        // from a sanitizer's interceptor).
        do throws(Errno) {
            let thread = try SystemThread.start(name: "too-big", stackBytes: 1 << 46) { record.runs.add(1, ordering: .relaxed) }
            thread.join()
            XCTFail("a thread with a 64 TiB stack started")
        } catch {
            XCTAssertTrue([EAGAIN, ENOMEM, EINVAL].contains(error.rawValue), "\(error)")
            XCTAssertTrue(error.operation.hasPrefix("pthread"), error.operation)
        }
        do throws(Errno) {
            _ = try SystemThread.start(name: "too-small", stackBytes: 1) { record.runs.add(1, ordering: .relaxed) }
            XCTFail("a 1-byte stack was accepted")
        } catch {
            XCTAssertEqual(error.rawValue, EINVAL)
        }
        XCTAssertEqual(record.runs.load(ordering: .relaxed), 0)
    }

    func testManyThreadsEachRunOnce() throws {
        let record = Record()
        let threads = try (0..<8).map { index in try SystemThread.start(name: "worker-\(index)") { record.runs.add(1, ordering: .relaxed) } }
        threads.forEach { $0.join() }
        XCTAssertEqual(record.runs.load(ordering: .relaxed), 8)
    }
}
