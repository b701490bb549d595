// The console's bounded, non-blocking output over a real pseudo-terminal: a reader that never
// reads costs dropped (counted) lines, never a wait; lines are dropped whole; the queue
// resumes once the reader drains it, and each episode of drops is reported once.
import XCTest
@testable import Drivers
#if canImport(Glibc)
import Glibc
#endif

final class BoundedConsoleOutputTests: XCTestCase {
    /// A pty whose master side (the engineer's end) never reads: everything the slave writes
    /// stays in the kernel buffer until it is full, then write(2) would block.
    private func stalledPair() throws -> (PseudoTerminal, SerialPort) {
        let pty = try PseudoTerminal.open()
        return (pty, try SerialPort.open(path: pty.slavePath))
    }

    func testWritesNeverBlockAndDropWholeLinesWhenTheQueueIsFull() throws {
        let (pty, port) = try stalledPair()
        defer { port.close(); pty.close() }
        var output = BoundedOutput(capacity: 1024)
        let line = Array(repeating: UInt8(ascii: "a"), count: 99) + [0x0A]
        var queued = 0, dropped = 0, episodes = 0
        // Far more than the kernel's pty buffer plus the queue: must return, one line at a time.
        for _ in 0..<2000 {
            switch output.enqueue(line) {
            case .queued: queued += 1
            case .dropped(let started):
                dropped += 1
                if started { episodes += 1 }
            }
            try output.flush(to: port.descriptor)
        }
        XCTAssertEqual(queued + dropped, 2000)
        XCTAssertGreaterThan(dropped, 0, "a reader that never reads must cost dropped lines")
        XCTAssertEqual(output.droppedLines, dropped)
        // Usually one episode; the kernel moves pty data on a worker, so now and then the queue
        // empties between two flushes and a new episode starts. Never one per dropped line.
        XCTAssertGreaterThanOrEqual(episodes, 1)
        XCTAssertLessThan(episodes, dropped / 2 + 1, "episodes, not one report per dropped line")
        XCTAssertLessThanOrEqual(output.pendingCount, 1024, "the queue stays within its capacity")

        // The reader comes back: everything queued arrives, whole lines only, then the episode ends.
        var received: [UInt8] = []
        for _ in 0..<1000 where !output.isEmpty || received.isEmpty {
            while let chunk = try pty.master.readAvailable(upTo: 65536), !chunk.isEmpty { received += chunk }
            try output.flush(to: port.descriptor)
        }
        while let chunk = try pty.master.readAvailable(upTo: 65536), !chunk.isEmpty { received += chunk }
        XCTAssertTrue(output.isEmpty)
        XCTAssertFalse(output.dropping, "an emptied queue ends the episode")
        XCTAssertEqual(received.count, queued * line.count, "every queued line arrives, nothing else")
        XCTAssertEqual(received.count % line.count, 0)
        if case .dropped = output.enqueue(line) { XCTFail("room again after the drain") }
        if case .dropped(let started) = BoundedOutput(capacity: 10).enqueueing(line) { XCTAssertTrue(started) }
    }

    func testLineConsoleAnswersAFloodWithoutWaitingAndCountsDrops() throws {
        let (pty, port) = try stalledPair()
        defer { port.close(); pty.close() }
        // The console on the slave, typed into from the master, whose side never reads answers.
        let console = LineConsole(input: port.descriptor, output: port.descriptor, outputCapacity: 2048) { _ in
            Array(repeating: String(repeating: "s", count: 70), count: 10)
        }
        var answered = 0
        for _ in 0..<200 {
            _ = try pty.master.writeSome(Array("status\r".utf8)[...])
            // poll returns at once every time: the flush never waits for the reader.
            XCTAssertEqual(try console.poll(timeoutMillis: 0), .open)
            answered += 1
        }
        XCTAssertEqual(answered, 200)
        XCTAssertGreaterThan(console.droppedLines, 0)
        XCTAssertTrue(console.takeDropEpisodeStarted(), "the first drop starts an episode")
        XCTAssertFalse(console.takeDropEpisodeStarted(), "reported once")
        XCTAssertTrue(console.wantsWrite)
    }
}

private extension BoundedOutput {
    func enqueueing(_ chunk: [UInt8]) -> Admission {
        var copy = self
        return copy.enqueue(chunk)
    }
}
