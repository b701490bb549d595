// The cloud service runs on the agent's own monotonic clock (AgentClock), not on a clock of
// its own: its reconnect backoff is a deadline on that clock. With the agent's clock frozen, a
// car whose broker refuses it makes its first attempt and then no other, however long real time
// runs; once the clock moves past the backoff, the next attempt follows. A service on the
// system clock would retry after 2 to 2.4 s of real time (ReconnectBackoff's first delay).
//
// Attempts are counted by a loopback listener that accepts each connection and closes it at
// once: the car sees the broker hang up before CONNACK, a failed attempt.
#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import XCTest
import Drivers
import Protocol
@testable import carkey_agent

final class CloudClockWiringTests: XCTestCase {
    func testReconnectBackoffFollowsTheAgentsMonotonicClock() throws {
        let folder = AgentTestSupport.temporaryDirectory()
        defer { AgentTestSupport.removeTree(folder) }
        let listener = try HangUpListener()
        defer { listener.stop() }

        let monotonic = ManualClock(startMillis: 1_000_000)
        let clock = AgentClock(monotonic: monotonic, systemSynchronized: { false })
        let store = try CarStore.open(stateDirectory: folder + "/state")
        let options = CloudOptions(endpoint: MQTTEndpoint(host: "127.0.0.1", port: listener.port, usesTLS: false),
                                   keepaliveSeconds: 30, willDelaySeconds: 0)
        let cloud = try AgentCloud(options: options, vehicleID: try VehicleID("OCK-UNIT-CLOCK"), store: store, clock: clock,
                                   log: AgentLog(prefix: "test"))
        try cloud.start(initialState: [.locked])
        defer { cloud.stop() }

        XCTAssertTrue(listener.wait(timeoutSeconds: 10) { $0 >= 1 }, "the first attempt never reached the listener")
        // Twice the longest first backoff (2.4 s) of real time: on the system clock that is at
        // least one more attempt; on the frozen agent clock it is none.
        SystemClock().sleep(millis: 5_000)
        XCTAssertEqual(listener.accepted, 1, "the cloud service retried on a clock other than the agent's")

        monotonic.advance(by: 3_000)
        XCTAssertTrue(listener.wait(timeoutSeconds: 10) { $0 >= 2 },
                      "no attempt after the agent's clock passed the backoff (\(listener.accepted) attempts)")
    }
}

/// Accepts TCP connections on a free loopback port and closes each at once, counting them.
private final class HangUpListener: Sendable {
    struct Failure: Error { let step: String; let errno: Int32 }

    let port: Int32
    private let socket: Int32
    private let count = Mutex(0)
    private let stopping = Mutex(false)
    private let thread = Mutex<SystemThread?>(nil)

    init() throws {
        let fd = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw Failure(step: "socket", errno: errno) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(fd, 16) == 0 else { close(fd); throw Failure(step: "bind/listen", errno: errno) }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        socket = fd
        port = Int32(UInt16(bigEndian: address.sin_port))
        let started = try SystemThread.start(name: "hangup-listener") { [self] in acceptLoop() }
        thread.withLock { $0 = started }
    }

    var accepted: Int { count.withLock { $0 } }

    func wait(timeoutSeconds: Double, until condition: (Int) -> Bool) -> Bool {
        let deadline = SystemClock().nowMillis() + UInt64(timeoutSeconds * 1000)
        while !condition(accepted) {
            guard SystemClock().nowMillis() < deadline else { return false }
            SystemClock().sleep(millis: 20)
        }
        return true
    }

    func stop() {
        stopping.withLock { $0 = true }
        thread.withLock { $0 }?.join()
        close(socket)
    }

    /// Wakes every 50 ms to see whether to stop (test code: a bounded wait, not a product loop).
    private func acceptLoop() {
        while !stopping.withLock({ $0 }) {
            var request = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
            guard poll(&request, 1, 50) > 0 else { continue }
            let connection = accept(socket, nil, nil)
            guard connection >= 0 else { continue }
            count.withLock { $0 += 1 }
            close(connection)
        }
    }
}
