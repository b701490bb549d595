// A message the bounded mailbox sheds under a flood was never handled, so the cloud's retry
// with the same ID (docs/cloud.md) must be admitted again, not refused as a duplicate: the
// gate forgets the ID of whatever the mailbox drops.
import XCTest
import Drivers
import Protocol
@testable import carkey_agent

final class InboundMailboxRetryTests: XCTestCase {
    private var folder = ""
    private let topics = CloudTopics(vehicleID: "V")

    override func setUp() { folder = AgentTestSupport.temporaryDirectory() }
    override func tearDown() { AgentTestSupport.removeTree(folder) }

    private func id(_ n: Int) -> String {
        let digits = String(n, radix: 16)
        return "6f1c2d3e-4a5b-4c6d-8e7f-" + String(repeating: "0", count: 12 - digits.count) + digits
    }

    private func config(_ n: Int) -> MQTTInbound {
        MQTTInbound(topic: topics.config, payload: Bytes(#"{"id":"\#(id(n))","type":"config","body":"0a"}"#.utf8))
    }

    private func revocation(_ n: Int) -> MQTTInbound {
        MQTTInbound(topic: topics.commands, payload: Bytes(#"{"id":"\#(id(n))","type":"revocation","body":"0b"}"#.utf8))
    }

    func testAShedMessageIsAdmittedAgainWhenTheCloudRetriesIt() throws {
        let store = try CarStore.open(stateDirectory: folder + "/state")
        let gate = InboundGate(topics: topics, store: store)
        let mailbox = try InboundMailbox(capacity: 3)
        // Past capacity: the oldest routine messages (1 and 2) make room for 4 and 5.
        for n in 1...5 { XCTAssertNoThrow(try gate.admit(config(n), deliver: { mailbox.post($0) }).get()) }
        XCTAssertEqual(mailbox.shedCount, 2)
        XCTAssertEqual(mailbox.count, 3)

        XCTAssertEqual(gate.admit(config(1), deliver: { mailbox.post($0) }).map(\.id), .success(id(1)),
                       "the shed message's retry reaches the mailbox")
        XCTAssertEqual(gate.admit(config(4)), .failure(.duplicate), "a queued message's repeat is still dropped")
        XCTAssertEqual(gate.admit(config(1)), .failure(.duplicate), "the retry, once queued, is not admitted twice")

        // The new message shed itself (nothing lower waits, none of its class queued) is
        // forgotten as well.
        let security = try InboundMailbox(capacity: 1)
        XCTAssertNoThrow(try gate.admit(revocation(10), deliver: { security.post($0) }).get())
        XCTAssertNoThrow(try gate.admit(config(11), deliver: { security.post($0) }).get())
        XCTAssertEqual(security.shedCount, 1)
        XCTAssertNoThrow(try gate.admit(config(11), deliver: { _ in nil }).get(), "config 11 was shed on arrival")
        XCTAssertEqual(gate.admit(revocation(10)), .failure(.duplicate))
    }

    /// A forgotten ID admitted again must survive the window's eviction of its first entry.
    func testAReadmittedIDOutlivesItsFirstWindowEntry() throws {
        let gate = InboundGate(topics: topics, store: try CarStore.open(stateDirectory: folder + "/state"))
        XCTAssertNoThrow(try gate.admit(config(0)).get())
        gate.forget(id(0))
        for n in 1..<InboundGate.admittedWindow { XCTAssertNoThrow(try gate.admit(config(n)).get()) }
        XCTAssertNoThrow(try gate.admit(config(0)).get(), "forgotten: admitted again")
        XCTAssertNoThrow(try gate.admit(config(InboundGate.admittedWindow)).get())  // evicts the first entry of 0
        XCTAssertEqual(gate.admit(config(0)), .failure(.duplicate), "its second admission still counts")
    }
}
