// CloudLink driven by readiness against a real broker, the way CloudService runs it: poll on
// the socket with the link's deadline as timeout. With a 5 s keepalive (libmosquitto's
// minimum) the link must stay up while idle, wake only a few times per keepalive, and ping on
// its own: a frozen broker is noticed through the unanswered ping (with the housekeeping
// deadline removed, that phase sees nothing, which is how this test was checked to fail).
// One test, to pay for the slow keepalive once.
import XCTest
@testable import Drivers
import TestHarness
#if canImport(Glibc)
import Glibc
#endif

final class CloudLinkKeepaliveTests: XCTestCase {
    private func makeLink(_ broker: MosquittoBroker, outbox: MemoryOutbox) throws -> CloudLink {
        let transport = try MosquittoTransport(options: MQTTConnectOptions(endpoint: MQTTEndpoint(url: broker.url),
                                                                           clientID: "car-keepalive-\(getpid())", keepaliveSeconds: 5))
        return CloudLink(settings: CloudLinkSettings(vehicleID: "VIN1"), transport: transport, outbox: outbox,
                         nextBirthSequence: { 1 }, unitRandom: { 0 }, backoff: ReconnectBackoff(baseMillis: 50, capMillis: 400))
    }

    /// The CloudService loop without the thread: returns the reports and the number of passes.
    private func runReady(_ link: CloudLink, seconds: UInt64, untilLost: Bool = false) throws -> (reports: [CloudLinkReport], passes: Int) {
        let end = monotonicMillis() + seconds * 1000
        var reports: [CloudLinkReport] = []
        var passes = 0
        var readiness: PollEvents = []
        while monotonicMillis() < end {
            let now = monotonicMillis()
            reports += link.step(nowMillis: now, readable: !readiness.isDisjoint(with: [.readable, .hangUp, .error]),
                                 writable: readiness.contains(.writable))
            passes += 1
            if untilLost && reports.contains(where: { if case .connectionLost = $0 { return true } else { return false } }) { break }
            let request = link.pollRequest.map { [$0] } ?? []
            let due = min(link.nextDeadline() ?? end, end)
            let ready = try Poll.wait(request, timeoutMillis: due > now ? Int32(clamping: due - now) : 0)
            readiness = request.isEmpty ? [] : ready[0]
        }
        return (reports, passes)
    }

    func testAnIdleLinkKeepsItselfAliveWithFewWakeupsAndNoticesASilentBroker() throws {
        let broker = try MosquittoBroker()
        try broker.start()
        let outbox = MemoryOutbox()
        outbox.enqueue(topic: "vehicles/VIN1/events", payload: "hello")
        let subscriber = try TestSubscriber(url: broker.url, filter: "vehicles/VIN1/events")
        let link = try makeLink(broker, outbox: outbox)
        let (reports, passes) = try runReady(link, seconds: 9)
        print("keepalive 5 s, 9 s idle: \(passes) passes")
        XCTAssertEqual(reports.filter { if case .connected = $0 { return true } else { return false } }.count, 1, "\(reports)")
        XCTAssertFalse(reports.contains { if case .connectionLost = $0 { return true } else { return false } },
                       "idle is not lost: \(reports)")
        XCTAssertEqual(link.state, .connected)
        XCTAssertEqual(try outbox.depth(), 0, "published and acknowledged through the readiness path")
        for _ in 0..<20 where subscriber.received.isEmpty { subscriber.poll(millis: 50) }
        XCTAssertEqual(subscriber.received.map { String(decoding: $0.payload, as: UTF8.self) }, ["hello"])
        // Connect, CONNACK, the publish and its acknowledgement, then per keepalive a ping out,
        // its response in, and at most one early housekeeping check: about 10 in 9 s.
        XCTAssertLessThan(passes, 25, "an idle link sleeps between keepalives")

        // The broker freezes (the TCP connection stays open): the unanswered ping gives it away
        // one keepalive later (plus libmosquitto's whole-second rounding).
        kill(broker.pid, SIGSTOP)
        defer { kill(broker.pid, SIGCONT) }
        let (silent, _) = try runReady(link, seconds: 13, untilLost: true)
        XCTAssertTrue(silent.contains { if case .connectionLost = $0 { return true } else { return false } }, "\(silent)")
    }
}
