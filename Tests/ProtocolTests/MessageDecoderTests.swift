// Field diagnostics: every message type is described, and garbage is explained, not crashed on.
import XCTest
@testable import Protocol

final class MessageDecoderTests: XCTestCase {
    func testDescribesEachType() throws {
        var rig = Rig()
        let (hello, challenge) = try rig.helloAndChallenge()
        XCTAssertTrue(MessageDecoder.describe(hello).hasPrefix("Hello (phone -> car), 77 bytes"))
        XCTAssertTrue(MessageDecoder.describe(hello).contains(KeyID(publicKey: Fixtures.phoneKey.publicKey).description))
        XCTAssertTrue(MessageDecoder.describe(challenge).contains("\"OCK-TEST-VIN-00001\""))
        guard case .send(let auth) = try rig.phone.receive(challenge, now: rig.now) else { return XCTFail() }
        XCTAssertTrue(MessageDecoder.describe(auth).contains("signature (der)"))
        let accepted = try XCTUnwrap(rig.toCar(auth).sent.first)
        let text = MessageDecoder.describe(accepted)
        XCTAssertTrue(text.hasPrefix("SessionAccepted (car -> phone) (encrypted)"), text)
        XCTAssertTrue(text.contains("counter:            0"))
        XCTAssertTrue(MessageDecoder.describe(hex: "7f01 0011").contains("17 rateLimited"))
    }

    func testExplainsInvalidInput() {
        XCTAssertEqual(MessageDecoder.describe(hex: "zz"), "invalid hex: odd length or a non-hex character")
        XCTAssertTrue(MessageDecoder.describe(hex: "0x0101").contains("truncated at keyID"))
        XCTAssertTrue(MessageDecoder.describe(hex: "0102").contains("[fault unsupportedVersion]"))
        XCTAssertTrue(MessageDecoder.describe([]).contains("empty message"))
        XCTAssertTrue(MessageDecoder.describe(hex: String(repeating: "00", count: 1025)).contains("longer than 1024"))
    }
}
