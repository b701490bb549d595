// UWB frame payloads and the rangingSetup arguments: vectors, bounds, and every way a frame or
// a setup can be wrong.
import XCTest
@testable import Protocol

final class RangingFrameTests: XCTestCase {
    let key = RangingFixtures.material.frameKey

    func testLayout() throws {
        let poll = RangingFrame.poll(sessionID: 0x0102_0304, round: 0x0a0b_0c0d).sealed(frameKey: key)
        XCTAssertEqual(poll.count, 17)
        XCTAssertEqual(Array(poll.prefix(9)).hexString, "01" + "01020304" + "0a0b0c0d")
        XCTAssertEqual(Array(poll.suffix(8)), Array(HMACSHA256.authenticationCode(key: key, message: Array(poll.prefix(9))).prefix(8)))
        let stamps = InitiatorTimestamps(pollTx: UWBTimestamp(0x01_0203_0405), responseRx: UWBTimestamp(0xff_0000_0001),
                                         finalTx: UWBTimestamp(0x00_0000_0200))
        let final = RangingFrame.final(sessionID: 1, round: 2, timestamps: stamps).sealed(frameKey: key)
        XCTAssertEqual(final.count, 32)
        XCTAssertEqual(Array(final[9..<24]).hexString, "0504030201" + "01000000ff" + "0002000000", "40-bit little-endian")
        XCTAssertEqual(try RangingFrame.open(final, frameKey: key).timestamps, stamps)
        XCTAssertEqual(RangingFrame.response(sessionID: 1, round: 2).sealed(frameKey: key).first, 0x02)
    }

    func testEveryTamperedByteIsRejected() {
        let stamps = InitiatorTimestamps(pollTx: UWBTimestamp(1), responseRx: UWBTimestamp(2), finalTx: UWBTimestamp(3))
        let final = RangingFrame.final(sessionID: 7, round: 9, timestamps: stamps).sealed(frameKey: key)
        for index in final.indices {
            var bad = final
            bad[index] ^= 0x01
            XCTAssertThrowsError(try RangingFrame.open(bad, frameKey: key), "byte \(index)")
        }
        var badTag = final
        badTag[31] ^= 0x80
        XCTAssertThrowsError(try RangingFrame.open(badTag, frameKey: key)) { XCTAssertEqual($0 as? RangingFrameError, .badTag) }
        // Changing the type byte to Poll makes the length wrong; to Response as well.
        var asPoll = final
        asPoll[0] = 0x01
        XCTAssertThrowsError(try RangingFrame.open(asPoll, frameKey: key)) { XCTAssertEqual($0 as? RangingFrameError, .oversized(length: 32)) }
    }

    func testAnotherSessionsKeyIsRejected() {
        let other = RangingMaterial(rangingKey: KAT.scalar("another session"), setup: RangingFixtures.setup)
        let poll = RangingFrame.poll(sessionID: RangingFixtures.setup.sessionID, round: 1).sealed(frameKey: other.frameKey)
        XCTAssertThrowsError(try RangingFrame.open(poll, frameKey: key)) { XCTAssertEqual($0 as? RangingFrameError, .badTag) }
        XCTAssertEqual(RangingFrameError.badTag.failure, .badAuthenticator)
    }

    func testTruncatedOversizedAndUnknownFramesAreRejected() {
        let poll = RangingFrame.poll(sessionID: 1, round: 1).sealed(frameKey: key)
        XCTAssertThrowsError(try RangingFrame.open([], frameKey: key)) { XCTAssertEqual($0 as? RangingFrameError, .truncated(length: 0)) }
        XCTAssertThrowsError(try RangingFrame.open(Array(poll.dropLast()), frameKey: key)) {
            XCTAssertEqual($0 as? RangingFrameError, .truncated(length: 16))
        }
        XCTAssertThrowsError(try RangingFrame.open(poll + [0], frameKey: key)) { XCTAssertEqual($0 as? RangingFrameError, .oversized(length: 18)) }
        XCTAssertThrowsError(try RangingFrame.open(Bytes(repeating: 1, count: 4096), frameKey: key)) {
            XCTAssertEqual($0 as? RangingFrameError, .oversized(length: 4096))
        }
        var unknown = poll
        unknown[0] = 0x04
        XCTAssertThrowsError(try RangingFrame.open(unknown, frameKey: key)) { XCTAssertEqual($0 as? RangingFrameError, .unknownType(4)) }
        XCTAssertEqual(RangingFrameError.unknownType(4).failure, .unexpectedFrame)
    }

    func testSetupVectorAndRoundTrip() throws {
        let setup = try RangingSetup(sessionID: 0xa1b2_c3d4, channel: 5, preambleCode: 12, stsLength: 128,
                                     roundIntervalMillis: 250, replyDelayMicros: 1500, replyJitterMicros: 300, firstRound: 7)
        XCTAssertEqual(setup.encoded().hexString, "01" + "a1b2c3d4" + "05" + "0c" + "80" + "00fa" + "05dc" + "012c" + "00000007")
        XCTAssertEqual(try RangingSetup.decode(setup.encoded()), setup)
    }

    func testSetupBounds() throws {
        let good = RangingFixtures.setup.encoded()
        func fault(_ change: (inout Bytes) -> Void) -> FaultCode? {
            var bytes = good
            change(&bytes)
            do { _ = try RangingSetup.decode(bytes); return nil } catch { return error.fault }
        }
        XCTAssertNil(fault { _ in })
        XCTAssertEqual(fault { $0 = [] }, .malformedMessage)
        XCTAssertEqual(fault { $0.removeLast() }, .malformedMessage)
        XCTAssertEqual(fault { $0.append(0) }, .malformedMessage)
        XCTAssertEqual(fault { $0.replaceSubrange(1..<5, with: [0, 0, 0, 0]) }, .malformedMessage, "session ID 0")
        XCTAssertEqual(fault { $0[0] = 2 }, .rangingUnsupported, "a newer format")
        XCTAssertEqual(fault { $0[5] = 7 }, .rangingUnsupported, "channel")
        XCTAssertEqual(fault { $0[6] = 8 }, .rangingUnsupported, "preamble code")
        XCTAssertEqual(fault { $0[6] = 13 }, .rangingUnsupported, "preamble code")
        XCTAssertEqual(fault { $0[7] = 48 }, .rangingUnsupported, "STS length")
        XCTAssertEqual(fault { $0[8] = 0; $0[9] = 49 }, .rangingUnsupported, "round interval")
        XCTAssertEqual(fault { $0[8] = 0x03; $0[9] = 0xe9 }, .rangingUnsupported, "round interval 1001")
        XCTAssertEqual(fault { $0[10] = 0x01; $0[11] = 0xf3 }, .rangingUnsupported, "reply delay 499")
        XCTAssertEqual(fault { $0[10] = 0x27; $0[11] = 0x11 }, .rangingUnsupported, "reply delay 10001")
        XCTAssertEqual(fault { $0[12] = 0; $0[13] = 99 }, .rangingUnsupported, "jitter 99 us")
        XCTAssertEqual(fault { $0[12] = 0x13; $0[13] = 0x89 }, .rangingUnsupported, "jitter 5001 us")
        XCTAssertEqual(fault { $0[14] = 0x10 }, .rangingUnsupported, "first round 2^28")
        XCTAssertEqual(RangingSetupError.unsupported("x").fault, .rangingUnsupported)
    }

    func testRandomSetupsHaveFreshSessionIDs() throws {
        let random = SeededRandom("setup ids")
        let ids = try (0..<20).map { _ in try RangingSetup.random(using: random).sessionID }
        XCTAssertEqual(Set(ids).count, 20)
        XCTAssertFalse(ids.contains(0))
        XCTAssertThrowsError(try RangingSetup.random(using: ScriptedRandom(Array(repeating: [0, 0, 0, 0], count: 8))))
    }

    func testMaterialDependsOnEverySetupByteAndNeverPrintsKeys() throws {
        let key = KAT.scalar("OCK1 test ranging key")
        let base = RangingMaterial(rangingKey: key, setup: RangingFixtures.setup)
        let other = RangingMaterial(rangingKey: key, setup: try RangingSetup(sessionID: RangingFixtures.setup.sessionID + 1))
        let laterRound = RangingMaterial(rangingKey: key, setup: try RangingSetup(sessionID: RangingFixtures.setup.sessionID, firstRound: 2))
        XCTAssertNotEqual(base.stsKey, other.stsKey)
        XCTAssertNotEqual(base.frameKey, other.frameKey)
        XCTAssertNotEqual(base.stsKey, laterRound.stsKey)
        XCTAssertEqual(base.stsKey.count, 16)
        XCTAssertEqual(base.stsIVBase.count, 16)
        XCTAssertEqual(base.frameKey.count, 32)
        XCTAssertNotEqual(base, other)
        XCTAssertEqual(base, RangingMaterial(rangingKey: key, setup: RangingFixtures.setup))
        for secret in [base.stsKey, base.stsIVBase, base.frameKey] {
            XCTAssertFalse("\(base)".contains(secret.hexString))
            XCTAssertFalse(String(reflecting: base).contains(secret.hexString))
        }
        // The IV differs only in its low 32 bits, by 4 per round (one counter per frame).
        XCTAssertEqual(Array(base.stsIV(round: 1).prefix(12)), Array(base.stsIVBase.prefix(12)))
        XCTAssertEqual(Array(base.stsIV(round: 1).suffix(4)), [0, 0, 0, 4])
        XCTAssertEqual(Array(base.stsIV(round: 0x0102_0304).suffix(4)), [0x04, 0x08, 0x0c, 0x10])
    }
}
