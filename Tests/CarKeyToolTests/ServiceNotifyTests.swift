// systemd's notify protocol from the built agent: a datagram socket bound by the test stands in
// for systemd ($NOTIFY_SOCKET); the agent says READY=1 with a status once it serves phones,
// pings WATCHDOG=1 at half of $WATCHDOG_USEC, and STOPPING=1 on SIGTERM. READY=1 itself never
// reaches the journal, so the agent logs a ready line with it: the line the README waits for.
import XCTest
import FoundationEssentials
import Drivers
#if canImport(Glibc)
import Glibc
#endif

final class ServiceNotifyTests: XCTestCase {
    /// A bound AF_UNIX datagram socket; returns its descriptor.
    private func bindDatagram(_ path: String) throws -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        XCTAssertGreaterThanOrEqual(fd, 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes + [0]) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        XCTAssertEqual(bound, 0, "bind \(path): errno \(errno)")
        return fd
    }

    /// Datagrams received within `seconds`, until `done` says enough.
    private func receive(_ fd: Int32, seconds: Double, until done: ([String]) -> Bool) -> [String] {
        var messages: [String] = []
        let deadline = Date().timeIntervalSince1970 + seconds
        while !done(messages), Date().timeIntervalSince1970 < deadline {
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 100) > 0 else { continue }
            var buffer = [UInt8](repeating: 0, count: 4096)
            let n = recv(fd, &buffer, buffer.count, 0)
            if n > 0 { messages.append(String(decoding: buffer[0..<n], as: UTF8.self)) }
        }
        return messages
    }

    func testReadyWatchdogAndStoppingReachTheNotifySocket() throws {
        let car = AgentHarness()
        let path = car.folder + "/notify.sock"
        let fd = try bindDatagram(path)
        defer { close(fd) }
        setenv("NOTIFY_SOCKET", path, 1)
        setenv("WATCHDOG_USEC", "2000000", 1)
        defer { unsetenv("NOTIFY_SOCKET"); unsetenv("WATCHDOG_USEC") }
        try car.start()
        unsetenv("NOTIFY_SOCKET")
        unsetenv("WATCHDOG_USEC")

        let first = receive(fd, seconds: 10) { messages in messages.contains { $0 == "WATCHDOG=1" } }
        let ready = try XCTUnwrap(first.first { $0.hasPrefix("READY=1\n") }, "\(first)")
        XCTAssertTrue(ready.contains("STATUS=car OCK-SIM-0001: simulated car OCK-SIM-0001 listening on"), ready)
        // Logged with the notification (stderr is read by a thread, so allow it a moment).
        let agent = try XCTUnwrap(car.agent)
        let line = "carkey-agent: ready: simulated car OCK-SIM-0001 listening on \(car.socketPath)\n"
        XCTAssertTrue(agent.wait(timeoutSeconds: 5) { agent.stderr.contains(line) }, agent.stderr)
        XCTAssertEqual(agent.stderr.split(separator: "\n").filter { $0.contains("carkey-agent: ready: ") }.count, 1, agent.stderr)
        XCTAssertTrue(first.contains("WATCHDOG=1"), "a watchdog ping within the interval: \(first)")
        // At half of 2 s: about one a second, never a flood.
        let pings = receive(fd, seconds: 3.2) { _ in false }.filter { $0 == "WATCHDOG=1" }.count
        XCTAssertTrue((2...4).contains(pings), "\(pings) pings in 3.2 s")

        XCTAssertEqual(car.stop(), 0)
        let last = receive(fd, seconds: 5) { messages in messages.contains("STOPPING=1") }
        XCTAssertTrue(last.contains("STOPPING=1"), "\(last)")
    }

    func testWithoutANotifySocketNothingIsSentAndAStatusCannotForgeAnAssignment() {
        let silent = ServiceNotifier(environment: { _ in nil }, pid: 1)
        XCTAssertFalse(silent.isActive)
        XCTAssertNil(silent.watchdogIntervalMillis)
        silent.ready(status: "x")   // no socket: nothing happens, nothing crashes
        XCTAssertEqual(ServiceNotifier.clean("ok\nREADY=1"), "ok?READY=1", "a newline would start a new assignment")
        let other = ServiceNotifier(environment: { ["WATCHDOG_USEC": "4000000", "WATCHDOG_PID": "99"][$0] }, pid: 1)
        XCTAssertNil(other.watchdogIntervalMillis, "the watchdog is for another process")
        let ours = ServiceNotifier(environment: { ["WATCHDOG_USEC": "4000000"][$0] }, pid: 1)
        XCTAssertEqual(ours.watchdogIntervalMillis, 2000)
    }
}
