// Back-off after repeated failures on one link, on monotonic time.
import XCTest
@testable import Protocol

final class RateLimitTests: XCTestCase {
    func badAuth() throws -> Bytes {
        try AuthResponseMessage(challenge: Bytes(repeating: 1, count: 32), timestamp: 0,
                                signature: Bytes(repeating: 1, count: 64)).encoded()
    }

    func testFiveFailuresWithinAMinuteBlockTheLinkFor30Seconds() throws {
        var rig = Rig()
        for _ in 0..<5 {
            XCTAssertEqual(rig.toCar(try badAuth()).cleartextFault, .unknownChallenge)
            rig.advance(seconds: 10)
        }
        // Blocked: even a valid Hello is refused.
        let hello = try rig.phone.start()
        XCTAssertEqual(rig.toCar(hello).cleartextFault, .rateLimited)
        XCTAssertEqual(rig.toCar(hello, link: LinkID(8)).sent.first?.first, MessageType.challenge.rawValue,
                       "other links are not affected")
        rig.advance(seconds: 19.9) // 29.9 s after the 5th failure
        XCTAssertEqual(rig.toCar(hello).cleartextFault, .rateLimited)
        rig.advance(seconds: 0.1)
        XCTAssertEqual(rig.toCar(hello).sent.first?.first, MessageType.challenge.rawValue)
    }

    func testFailuresSpreadOverMoreThanTheWindowDoNotBlock() throws {
        var rig = Rig()
        for _ in 0..<10 {
            XCTAssertEqual(rig.toCar(try badAuth()).cleartextFault, .unknownChallenge)
            rig.advance(seconds: 15.1)
        }
    }

    func testPenaltyDoublesUpToTheCap() {
        let policy = RateLimitPolicy(failureThreshold: 2, windowMillis: 60_000, basePenaltyMillis: 30_000, maxPenaltyMillis: 100_000)
        var limiter = RateLimiter(policy: policy, capacity: 4)
        let link = LinkID(1)
        var now: UInt64 = 0
        var penalties: [UInt64] = []
        for _ in 0..<4 {
            XCTAssertFalse(limiter.recordFailure(link, now: now))
            XCTAssertTrue(limiter.recordFailure(link, now: now))
            penalties.append(limiter.remainingBlock(link, now: now))
            XCTAssertFalse(limiter.recordFailure(link, now: now + 1), "failures while blocked do not extend the block")
            now += penalties.last! // exactly when the block ends
            XCTAssertFalse(limiter.isBlocked(link, now: now))
        }
        XCTAssertEqual(penalties, [30_000, 60_000, 100_000, 100_000])
        // After a long quiet period the penalty starts at the base again.
        now += 200_000
        limiter.recordFailure(link, now: now)
        limiter.recordFailure(link, now: now)
        XCTAssertEqual(limiter.remainingBlock(link, now: now), 30_000)
    }

    func testLimiterMemoryIsBounded() {
        var limiter = RateLimiter(policy: RateLimitPolicy(failureThreshold: 1), capacity: 2)
        limiter.recordFailure(LinkID(1), now: 0)
        limiter.recordFailure(LinkID(2), now: 1)
        limiter.recordFailure(LinkID(3), now: 2)
        XCTAssertFalse(limiter.isBlocked(LinkID(1), now: 3), "least recently active entry evicted")
        XCTAssertTrue(limiter.isBlocked(LinkID(3), now: 3))
    }

    func testRateLimitedInsideSessionIsAnEncryptedResponse() throws {
        var rig = Rig(record: KeyRecord(publicKey: Fixtures.phoneKey.publicKey, role: .shared, permissions: .unlock))
        try rig.handshake()
        for _ in 0..<5 { XCTAssertEqual(try rig.run(.lock).fault, .insufficientPermission) }
        let actions = try rig.send(.unlock)
        XCTAssertTrue(actions.performs.isEmpty)
        XCTAssertEqual(try rig.phoneResponse(actions).fault, .rateLimited)
        rig.advance(seconds: 30)
        XCTAssertTrue(try rig.run(.unlock).isOK)
    }

    func testBusyDoesNotCountAsAFailure() throws {
        var rig = Rig()
        try rig.handshake()
        let request = try rig.send(.unlock).performs[0]
        for _ in 0..<6 {
            rig.phone.forgetPendingForTest()
            XCTAssertEqual(try rig.phoneResponse(rig.send(.lock)).fault, .busy)
        }
        _ = try rig.phoneResponse(rig.car.complete(request.token, result: nil, vehicleState: [], now: rig.now))
        XCTAssertTrue(try rig.run(.lock).isOK, "six busy answers did not block the link")
    }

    /// Issue 14: there is no car-wide pre-session record any more. It let anyone in radio
    /// range lock every phone out (four bursts of 21 malformed frames kept the owner out for
    /// 179 of 181 s). Failures on other links never refuse a new link; what bounds an attacker
    /// who reconnects is the handshake budget (LinkAdmissionTests).
    func testFailuresOnOtherLinksDoNotRefuseANewLink() throws {
        var rig = Rig()
        let sessionLink = rig.link
        try rig.handshake()
        for n in 0..<40 {
            XCTAssertEqual(rig.toCar(try badAuth(), link: LinkID(100 + UInt64(n))).cleartextFault, .unknownChallenge, "attempt \(n)")
        }
        var other = PhoneProtocolSession(configuration: rig.phone.configuration)
        let hello = try other.start()
        XCTAssertEqual(rig.toCar(hello, link: LinkID(200)).sent.first?.first, MessageType.challenge.rawValue,
                       "a brand-new link is served")
        XCTAssertTrue(try rig.run(.unlock).isOK, "sessions that exist keep working")
        XCTAssertTrue(rig.car.establishedLinks.contains(sessionLink))
    }

    func testBusyAnswersDoNotCountAgainstALink() throws {
        // Busy answers (no free link slots) are the car's condition, not a phone's failure.
        var rig = Rig(configure: { $0.maxLinks = 1 })
        _ = try rig.helloAndChallenge()
        var other = PhoneProtocolSession(configuration: rig.phone.configuration)
        let hello = try other.start()
        for _ in 0..<8 {
            let actions = rig.toCar(hello, link: LinkID(50))
            XCTAssertEqual(actions.cleartextFault, .busy)
            XCTAssertTrue(actions.closed.isEmpty, "busy never closes the link")
        }
    }
}
