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

    /// An old app's PairingHello (version 1) decodes, so the car can answer it precisely; the
    /// description says that the car refuses it and with which fault, the one the car sends.
    func testAVersion1PairingHelloNamesTheCarsRefusal() throws {
        let old = [MessageType.pairingHello.rawValue, 0x01] + Fixtures.phoneKey.publicKey.sec1
        let text = MessageDecoder.describe(old)
        XCTAssertTrue(text.hasPrefix("PairingHello (phone -> car), 67 bytes, version 1 (pre-SPAKE2+ pairing)\n"), text)
        XCTAssertTrue(text.hasSuffix("\n  refused by the car: Fault 35 pairingVersion: \(FaultCode.pairingVersion.remediation)"), text)
        var rig = Rig()
        XCTAssertEqual(rig.toCar(old).cleartextFault, .pairingVersion, "the fault named is the one the car sends")
        let current = try PairingHelloMessage(phonePublicKey: Fixtures.phoneKey.publicKey.sec1, shareP: SPAKE2Plus.m).encoded()
        XCTAssertFalse(MessageDecoder.describe(current).contains("refused"), MessageDecoder.describe(current))
    }

    func testExplainsInvalidInput() {
        XCTAssertEqual(MessageDecoder.describe(hex: "zz"), "invalid hex: odd length or a non-hex character")
        XCTAssertTrue(MessageDecoder.describe(hex: "0x0101").contains("truncated at keyID"))
        XCTAssertTrue(MessageDecoder.describe(hex: "0102").contains("[fault unsupportedVersion]"))
        XCTAssertTrue(MessageDecoder.describe([]).contains("empty message"))
        XCTAssertTrue(MessageDecoder.describe(hex: String(repeating: "00", count: 1025)).contains("longer than 1024"))
    }

    func testHexInputAndThrowingFieldLines() {
        XCTAssertEqual(MessageDecoder.parseHex("0x7f01 00:01"), .bytes([0x7F, 0x01, 0x00, 0x01]))
        XCTAssertEqual(MessageDecoder.parseHex("7f0"), .notHex)
        XCTAssertEqual(MessageDecoder.parseHex(String(repeating: "ab", count: 1025)), .longerThanAMessage)
        XCTAssertEqual(MessageDecoder.parseHex(String(repeating: "zz", count: 1025)), .notHex)
        XCTAssertThrowsError(try MessageDecoder.fieldLines([0x01, 0x01, 0xAA])) {
            XCTAssertEqual($0 as? MessageFormatError, .truncated(field: "keyID", needed: 8, available: 1))
        }
        XCTAssertEqual(try MessageDecoder.fieldLines([0x7F, 0x01, 0x00, 0x11]).first, "Fault (car -> phone, cleartext), 4 bytes, version 1")
    }
}
