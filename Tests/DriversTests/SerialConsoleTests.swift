// The line console over a real pseudo-terminal pair: typed commands get answers, and overlong
// lines, garbage, hang-ups and a reader that stops reading never crash or block it.
#if canImport(Glibc)
import Glibc
#endif
import XCTest
@testable import Drivers

final class SerialConsoleTests: XCTestCase {
    func testTypedCommandsAreAnsweredWithCRLFLines() throws {
        let rig = try SerialRig()
        try rig.type("status\r")
        XCTAssertEqual(try rig.step(), .open)
        XCTAssertEqual(try rig.read(until: "doors: closed\r\n"), "locks: locked\r\ndoors: closed\r\n")
        try rig.type("frobnicate\n")
        _ = try rig.step()
        XCTAssertEqual(try rig.read(until: "\r\n"), "error: unknown command \"frobnicate\" (try help)\r\n")
    }

    func testCRAndLFAndCRLFAllWorkAndSurroundingSpaceIsTrimmed() throws {
        let rig = try SerialRig()
        try rig.type("version\r\n  version\t\nversion\r\r\n\n")
        _ = try rig.step()
        XCTAssertEqual(try rig.read(until: "test\r\ncarkey-agent test\r\ncarkey-agent test\r\n"),
                       String(repeating: "carkey-agent test\r\n", count: 3))
        // Empty lines never reach the handler; the CRLF pair was one line end, not two.
        XCTAssertEqual(rig.commands.value, ["version", "version", "version"])
    }

    func testOverlongLineAnswersOneErrorAndTheConsoleCarriesOn() throws {
        let rig = try SerialRig(maxLineBytes: 64)
        try rig.type(String(repeating: "Z", count: 900) + "\nversion\n")
        // 900 bytes plus the rest arrive in one read chunk of up to 1024 bytes.
        _ = try rig.step()
        let output = try rig.read(until: "carkey-agent test\r\n")
        XCTAssertEqual(output, "error: line too long (max 64 bytes), discarded\r\ncarkey-agent test\r\n")
        XCTAssertEqual(rig.commands.value, ["version"], "no part of the long line was executed")
    }

    func testBinaryGarbageNeverCrashesOrBlocks() throws {
        let rig = try SerialRig()
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<20 {
            // Garbage without line ends, so the handler sees at most one odd line per burst.
            let garbage = (0..<512).map { _ in UInt8.random(in: 0...255, using: &generator) }.filter { $0 != 0x0A && $0 != 0x0D }
            try rig.type(garbage)
            _ = try rig.step()
            try rig.type([0x00, 0xFF, 0xFE, 0x0A])
            _ = try rig.step()
        }
        _ = try rig.drain()
        try rig.type("\nversion\n")
        _ = try rig.step()
        XCTAssertTrue(try rig.read(until: "carkey-agent test\r\n").hasSuffix("carkey-agent test\r\n"))
    }

    func testPollWithoutInputReturnsAfterTheTimeout() throws {
        let rig = try SerialRig()
        let clock = SystemClock()
        let before = clock.nowMillis()
        XCTAssertEqual(try rig.console.poll(timeoutMillis: 30), .open)
        let waited = clock.nowMillis() - before
        XCTAssertGreaterThanOrEqual(waited, 25)
        XCTAssertLessThan(waited, 1000, "poll must honour its timeout")
        XCTAssertEqual(rig.commands.value, [])
    }

    func testHangUpIsReportedAsClosed() throws {
        let pty = try PseudoTerminal.open()
        let port = try SerialPort.open(path: pty.slavePath)
        defer { port.close() }
        let console = LineConsole(input: port.descriptor, output: port.descriptor) { _ in [] }
        pty.close() // the cable side goes away
        XCTAssertEqual(try console.poll(timeoutMillis: 1000), .closed)
    }

    func testAReaderThatStopsReadingCostsDroppedLinesNotTime() throws {
        let rig = try SerialRig(outputCapacity: 4096)
        let line = String(repeating: "x", count: 200)
        // The master never reads: the pty buffer and the queue fill, then lines are dropped.
        try rig.console.write(lines: Array(repeating: line, count: 5000))
        XCTAssertGreaterThan(rig.console.droppedLines, 0)
        XCTAssertTrue(rig.console.wantsWrite)
    }

    func testEchoAndPromptForHumans() throws {
        let rig = try SerialRig(echo: true, prompt: "carkey> ")
        try rig.console.start()
        XCTAssertEqual(try rig.read(until: "carkey> "), "carkey> ")
        try rig.type("vx\u{7F}ersion\r")
        _ = try rig.step()
        XCTAssertEqual(try rig.read(until: "test\r\ncarkey> "), "vx\u{8} \u{8}ersion\r\ncarkey-agent test\r\ncarkey> ")
    }

    func testAnswersCannotInjectTerminalEscapes() throws {
        let rig = try SerialRig { _ in ["name: \u{1B}[2Jphone\u{7}", "two\nlines"] }
        try rig.type("keys\n")
        _ = try rig.step()
        XCTAssertEqual(try rig.read(until: "lines\r\n"), "name: [2Jphone\r\ntwo\r\nlines\r\n")
    }

    func testUnsolicitedLinesAreWritten() throws {
        let rig = try SerialRig()
        try rig.console.write(lines: ["event: door open"])
        XCTAssertEqual(try rig.read(until: "open\r\n"), "event: door open\r\n")
    }

    /// The --simulate layout: the console on the master, a terminal program on the slave path.
    func testConsoleOnTheMasterSideForSimulate() throws {
        let pty = try PseudoTerminal.open()
        defer { pty.close() }
        XCTAssertTrue(pty.slavePath.hasPrefix("/dev/pts/"), pty.slavePath)
        let console = LineConsole(input: pty.master, output: pty.master) { line in ["you said \(line)"] }
        let user = try SerialPort.open(path: pty.slavePath)
        defer { user.close() }
        _ = try user.descriptor.writeSome(ArraySlice("hello\r".utf8))
        XCTAssertEqual(try console.poll(timeoutMillis: 1000), .open)
        var received: [UInt8] = []
        let clock = SystemClock()
        let deadline = clock.nowMillis() + 2000
        while !String(decoding: received, as: UTF8.self).hasSuffix("\r\n"), clock.nowMillis() < deadline {
            _ = try user.descriptor.poll(events: Int16(POLLIN), timeoutMillis: 100)
            received += try user.descriptor.readAvailable(upTo: 256) ?? []
        }
        XCTAssertEqual(String(decoding: received, as: UTF8.self), "you said hello\r\n")
    }
}
