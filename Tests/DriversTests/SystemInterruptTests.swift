// The one EINTR policy: a signal that interrupts a blocking call (a handler installed without
// SA_RESTART, as a library might) restarts the call inside the System layer; callers never see
// EINTR. Each test first shows, with the raw syscall, that the setup really produces EINTR, so
// a wrapper that stopped retrying would fail here instead of passing by luck.
#if canImport(Glibc)
import Glibc
#endif
import Drivers
import Synchronization
import XCTest

private let interruptions = Atomic<Int>(0)
private let countInterruption: @convention(c) (Int32) -> Void = { _ in
    interruptions.add(1, ordering: .relaxed)
}

final class SystemInterruptTests: XCTestCase {
    private var previous = sigaction()

    override func setUp() {
        super.setUp()
        var action = sigaction()
        action.__sigaction_handler.sa_handler = countInterruption
        sigemptyset(&action.sa_mask)
        action.sa_flags = 0 // no SA_RESTART: the kernel returns EINTR from a blocked read or poll
        XCTAssertEqual(sigaction(SIGUSR1, &action, &previous), 0)
    }

    override func tearDown() {
        sigaction(SIGUSR1, &previous, nil)
        super.tearDown()
    }

    /// Signals `target` every 20 ms, `signals` times or until `done` is set when given, then
    /// writes one byte to `writeEnd`. The caller joins the returned thread.
    private func interrupt(_ target: pthread_t, signals: Int, until done: Flag? = nil, thenWrite writeEnd: FileDescriptor) throws -> SystemThread {
        try SystemThread.start(name: "eintr-test") {
            for _ in 0..<signals where !(done?.value.load(ordering: .acquiring) ?? false) {
                SystemClock.sleep(nanoseconds: 20_000_000)
                pthread_kill(target, SIGUSR1)
            }
            SystemClock.sleep(nanoseconds: 20_000_000)
            writeEnd.writeWakeByte(42)
        }
    }

    final class Flag: Sendable {
        let value = Atomic<Bool>(false)
    }

    func testTheRawReadReallyIsInterrupted() throws {
        let ends = try FileDescriptor.pipe(nonBlocking: false)
        defer { ends.readEnd.close(); ends.writeEnd.close() }
        // Signals until the read returns (at most 5 s, then the byte unblocks it): however late
        // this thread reaches read(2), a signal lands while it is blocked.
        let done = Flag()
        let thread = try interrupt(pthread_self(), signals: 250, until: done, thenWrite: ends.writeEnd)
        var byte: UInt8 = 0
        let result = Glibc.read(ends.readEnd.rawValue, &byte, 1)
        let code = errno
        done.value.store(true, ordering: .releasing)
        thread.join()
        XCTAssertEqual(result, -1, "the raw read was not interrupted: the other tests here prove nothing")
        XCTAssertEqual(code, EINTR)
    }

    func testAnInterruptedReadIsRestarted() throws {
        let ends = try FileDescriptor.pipe(nonBlocking: false)
        defer { ends.readEnd.close(); ends.writeEnd.close() }
        let before = interruptions.load(ordering: .relaxed)
        let thread = try interrupt(pthread_self(), signals: 3, thenWrite: ends.writeEnd)
        var buffer = [UInt8](repeating: 0, count: 4)
        let n = try buffer.withUnsafeMutableBytes { try ends.readEnd.read(into: $0) }
        thread.join()
        XCTAssertGreaterThanOrEqual(interruptions.load(ordering: .relaxed) - before, 3, "the handler ran")
        XCTAssertEqual(Array(buffer.prefix(n)), [42], "the read came back with the data, not EINTR")
    }

    func testAnInterruptedPollIsRestarted() throws {
        let ends = try FileDescriptor.pipe(nonBlocking: true)
        defer { ends.readEnd.close(); ends.writeEnd.close() }
        let thread = try interrupt(pthread_self(), signals: 3, thenWrite: ends.writeEnd)
        // Bounded: 30 s is far beyond the ~80 ms the writer takes; only a hang would reach it.
        let ready = try Poll.wait([(ends.readEnd, .readable)], timeoutMillis: 30_000)
        thread.join()
        XCTAssertTrue(ready[0].contains(.readable))
    }

    func testAnInterruptedSleepIsNotCutShort() throws {
        let ends = try FileDescriptor.pipe(nonBlocking: true)
        defer { ends.readEnd.close(); ends.writeEnd.close() }
        let clock = SystemClock()
        let thread = try interrupt(pthread_self(), signals: 3, thenWrite: ends.writeEnd)
        let start = clock.nowMillis()
        clock.sleep(millis: 150)
        let slept = clock.nowMillis() - start
        thread.join()
        // A lower bound is behaviour, not a timing figure: nanosleep without the restart returns
        // at the first signal, ~20 ms in.
        XCTAssertGreaterThanOrEqual(slept, 150)
    }
}
