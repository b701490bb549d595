// The points an independent implementation, written from docs/protocol.md alone, found the
// document silent or ambiguous on. Each test pins the behaviour the document now states.
import XCTest
@testable import Protocol

final class ProtocolClarificationTests: XCTestCase {
    /// Section 9: the first Command carries counter 1; counter 0 is `replayedCounter` (the
    /// car's receive counter starts as if record 0 had been accepted).
    func testACommandWithCounterZeroIsReplayed() throws {
        var rig = Rig()
        let (hello, challengeBytes) = try rig.helloAndChallenge()
        guard case .send(let auth) = try rig.phone.receive(challengeBytes, now: rig.now) else { return XCTFail() }
        let accepted = rig.toCar(auth)
        XCTAssertEqual(accepted.grants.count, 1)
        guard case .established = try rig.phone.receive(try XCTUnwrap(accepted.sent.first), now: rig.now) else { return XCTFail() }
        guard case .hello(let helloMessage) = try Message.decode(hello),
              case .challenge(let challenge) = try Message.decode(challengeBytes) else { return XCTFail() }
        // The phone's half of the session, recomputed from the transcript: the rig's phone
        // would never seal counter 0 itself.
        let carEphemeral = try DerivedEphemeralKeys("car eph").makeEphemeralKey()
        let keys = try KeySchedule.deriveKeys(ephemeral: carEphemeral, peer: try P256PublicKey(sec1: helloMessage.ephemeralPublicKey),
                                              challenge: challenge.challenge, hello: hello, challengeMessage: challengeBytes,
                                              authResponse: auth)
        var phoneSide = SessionChannel(keys: keys, isCar: false, nextSendCounter: 0, lastReceivedCounter: 0, sendLimit: 10)
        let body = try CommandBody(command: .status, expiresAt: UInt32(rig.now.wallSeconds) + 10)
        let zero = try phoneSide.seal(.command, body.encoded())
        let answer = rig.toCar(zero)
        XCTAssertTrue(answer.performs.isEmpty)
        XCTAssertEqual(try rig.phoneResponse(answer).fault, .replayedCounter)
        // The same channel's next record, counter 1, is the first that counts.
        XCTAssertEqual(rig.toCar(try phoneSide.seal(.command, body.encoded())).performs.count, 1)
    }

    /// Section 9: gaps are allowed; lower is out of order, equal is replayed.
    func testCounterGapsAreAllowedButNeverFilledLater() throws {
        var rig = Rig()
        try rig.handshake()
        var commands: [Bytes] = []
        for _ in 1...6 {
            commands.append(try rig.phone.command(.status, now: rig.now))
            rig.phone.forgetPendingForTest()
        }
        func run(_ bytes: Bytes) throws -> FaultCode? {
            let actions = rig.toCar(bytes)
            if let request = actions.performs.first {
                return try rig.phoneResponse(rig.car.complete(request.token, result: nil, vehicleState: [.locked], now: rig.now)).fault
            }
            return try rig.phoneResponse(actions).fault
        }
        XCTAssertNil(try run(commands[0]), "counter 1")
        XCTAssertNil(try run(commands[4]), "counter 5 after 1: a gap is fine")
        XCTAssertEqual(try run(commands[2]), .outOfOrderCounter, "counter 3 after 5")
        XCTAssertEqual(try run(commands[4]), .replayedCounter, "counter 5 again")
        XCTAssertNil(try run(commands[5]), "counter 6")
    }

    /// Section 2: `AA` with a wrong second byte is a malformed header.
    func testAuthResponseWithAWrongSecondMagicByteIsMalformed() throws {
        var rig = Rig()
        let (_, challenge) = try rig.helloAndChallenge()
        guard case .send(var auth) = try rig.phone.receive(challenge, now: rig.now) else { return XCTFail() }
        auth[1] = 0xBC
        XCTAssertEqual(rig.toCar(auth).cleartextFault, .malformedMessage)
        XCTAssertEqual(rig.toCar([0xAA]).cleartextFault, .malformedMessage)
        XCTAssertEqual(rig.toCar([0x42, 0x01]).cleartextFault, .malformedMessage, "an unknown type")
    }

    /// Section 11, "In a session": refusals before the plaintext is decoded carry command 0x00;
    /// from S6 on the command answered.
    func testRefusalsCarryCommandZeroUntilThePlaintextIsDecoded() throws {
        var rig = Rig(record: KeyRecord(publicKey: Fixtures.phoneKey.publicKey, role: .shared, permissions: [.lock]))
        try rig.handshake()
        var tampered = try rig.phone.command(.unlock, now: rig.now)
        tampered[tampered.count - 1] ^= 0x01
        let undecryptable = try rig.phoneResponse(rig.toCar(tampered))
        XCTAssertEqual(undecryptable.fault, .decryptionFailed)
        XCTAssertEqual(undecryptable.commandByte, 0x00)
        rig.phone.forgetPendingForTest()
        let refused = try rig.phoneResponse(rig.toCar(try rig.phone.command(.unlock, now: rig.now)))
        XCTAssertEqual(refused.fault, .insufficientPermission)
        XCTAssertEqual(refused.command, .unlock)
    }

    /// Section 18.9: the stored record with the revocation applied differs in byte 77 only.
    func testTheRevokedStoredRecordDiffersInTheFlagsByteOnly() throws {
        let hex = "4b0104fdd12bdc35ebe064b056583ad6200e9841f4010bb9041fa5eda98e5280"
            + "1583b3a3b73d3e419a916564cf17189daf69b9807bc242164f68632bb996e11c"
            + "f9923602016955b900695ef38002a1b2c3d4e5f6071880cfa36924866af5"
        let stored = Bytes(testHex: hex)
        var record = try KeyRecord(storedBytes: stored)
        XCTAssertFalse(record.revoked)
        XCTAssertEqual(stored[77], 0x02)
        record.revoked = true
        var expected = stored
        expected[77] = 0x03
        XCTAssertEqual(record.storedBytes(), expected)
    }
}
