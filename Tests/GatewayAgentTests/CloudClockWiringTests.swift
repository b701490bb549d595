// The cloud service runs on the agent's own monotonic clock (AgentClock), not on a clock of
// its own: its reconnect backoff is a deadline on that clock. With the agent's clock frozen, a
// car whose broker refuses it makes its first attempt and then no other, however long real time
// runs; once the clock moves past the backoff, the next attempt follows. A service on the
// system clock would retry after 2 to 2.4 s of real time (ReconnectBackoff's first delay).
//
// Attempts are counted by a loopback relay (TestHarness.ByteCountingRelay) whose target
// refuses connections: it accepts each attempt and closes it at once, so the car sees the
// broker hang up before CONNACK, a failed attempt.
import XCTest
import Drivers
import Protocol
import TestHarness
@testable import carkey_agent

final class CloudClockWiringTests: XCTestCase {
    func testReconnectBackoffFollowsTheAgentsMonotonicClock() throws {
        let folder = AgentTestSupport.temporaryDirectory()
        defer { AgentTestSupport.removeTree(folder) }
        let relay = try ByteCountingRelay(targetPort: try Self.closedLoopbackPort())
        defer { relay.stop() }

        let monotonic = ManualClock(startMillis: 1_000_000)
        let clock = AgentClock(monotonic: monotonic, systemSynchronized: { false })
        let store = try CarStore.open(stateDirectory: folder + "/state")
        let options = CloudOptions(endpoint: MQTTEndpoint(host: "127.0.0.1", port: relay.port, usesTLS: false),
                                   keepaliveSeconds: 30, willDelaySeconds: 0)
        let cloud = try AgentCloud(options: options, vehicleID: try VehicleID("OCK-UNIT-CLOCK"), store: store, clock: clock,
                                   log: AgentLog(prefix: "test"))
        try cloud.start(initialState: [.locked])
        defer { cloud.stop() }

        XCTAssertTrue(relay.wait(timeoutSeconds: 10) { $0.attempts >= 1 }, "the first attempt never reached the relay")
        // Twice the longest first backoff (2.4 s) of real time: on the system clock that is at
        // least one more attempt; on the frozen agent clock it is none.
        SystemClock().sleep(millis: 5_000)
        XCTAssertEqual(relay.counts.attempts, 1, "the cloud service retried on a clock other than the agent's")

        monotonic.advance(by: 3_000)
        XCTAssertTrue(relay.wait(timeoutSeconds: 10) { $0.attempts >= 2 },
                      "no attempt after the agent's clock passed the backoff (\(relay.counts.attempts) attempts)")
    }

    /// A loopback port nothing listens on: a relay's own port, once that relay has stopped.
    private static func closedLoopbackPort() throws -> Int32 {
        let probe = try ByteCountingRelay(targetPort: 1)
        defer { probe.stop() }
        return probe.port
    }
}
