// Random and mutated PDUs against the server and the client: nothing crashes, every PDU
// they produce fits the MTU, and the server answers each request with exactly one PDU.
import XCTest
@testable import Drivers
import Protocol

final class ATTFuzzTests: XCTestCase {
    /// Deterministic xorshift, so a failure reproduces.
    private struct Random {
        var state: UInt64
        mutating func next() -> UInt64 {
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            return state
        }
        mutating func byte() -> UInt8 { UInt8(truncatingIfNeeded: next()) }
        mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }
    }

    /// Valid-looking starts so the fuzz reaches the handlers, not just the length checks.
    private let seeds = ["02f700", "040100ffff", "060100ffff0028", "080100ffff0328", "0a0300", "0c03000400",
                         "100100ffff0028", "120f000100", "520c00c0000100", "1e", "0e0300"]

    func testServerSurvivesRandomPDUs() throws {
        var random = Random(state: 0x9E37_79B9_7F4A_7C15)
        for connection in 0..<200 {
            var server = ATTServerConnection(database: .car())
            for _ in 0..<200 {
                var pdu = attHex(seeds[random.below(seeds.count)])
                for _ in 0..<random.below(4) where !pdu.isEmpty { pdu[random.below(pdu.count)] = random.byte() }
                for _ in 0..<random.below(6) { pdu.append(random.byte()) }
                if random.below(8) == 0 { pdu = (0..<random.below(30)).map { _ in random.byte() } }
                let mtuBefore = server.mtu
                let wasClosed = server.isClosed
                let output = server.receive(pdu)
                for response in output.pdus {
                    XCTAssertLessThanOrEqual(response.count, server.mtu, "connection \(connection): \(pdu.hexString)")
                }
                if !wasClosed, let opcode = pdu.first, ATTOpcode.isRequest(opcode) {
                    XCTAssertFalse(output.pdus.isEmpty, "a request is answered: \(pdu.hexString)")
                }
                XCTAssertGreaterThanOrEqual(server.mtu, mtuBefore)
                if server.isSubscribed && !server.isClosed {
                    _ = try? server.send(message: Bytes(repeating: 1, count: 1 + random.below(1024)))
                }
            }
        }
    }

    func testClientSurvivesRandomPDUs() {
        var random = Random(state: 0x0123_4567_89AB_CDEF)
        let replies = ["03f700", "070a000f00", "0915" + "0b000c0c00" + KeyUUIDWire.phoneToCar, "01080e000a",
                       "05010f000229", "13", "1b0e00c0000101", "1d0e00c0000101", "0102000006"]
        for _ in 0..<2000 {
            var client = ATTClientConnection()
            _ = client.start()
            for _ in 0..<12 {
                var pdu = attHex(replies[random.below(replies.count)])
                if random.below(3) == 0, !pdu.isEmpty { pdu[random.below(pdu.count)] = random.byte() }
                if random.below(4) == 0 { pdu.removeLast(random.below(pdu.count + 1)) }
                if let output = try? client.receive(pdu) {
                    XCTAssertTrue(output.pdus.allSatisfy { $0.count <= client.mtu })
                }
            }
        }
    }
}
