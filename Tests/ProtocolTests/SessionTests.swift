// Commands inside a session: permissions, expiry, counters, busy, revocation and session end.
import XCTest
@testable import Protocol

extension PhoneProtocolSession {
    /// Lets a test produce several commands without waiting for responses (an attacker's
    /// capture-and-reorder, or a buggy phone pipelining).
    mutating func forgetPendingForTest() {
        if case .established(var session) = state {
            session.pending = nil
            state = .established(session)
        }
    }
}

final class SessionTests: XCTestCase {
    func sharedRig(_ permissions: Permissions, notAfter: UInt32 = KeyRecord.noNotAfter, trusted: Bool = true) -> Rig {
        Rig(record: KeyRecord(publicKey: Fixtures.phoneKey.publicKey, role: .shared, permissions: permissions,
                              notAfter: notAfter), trusted: trusted)
    }

    func testEveryCommandForAnOwner() throws {
        var rig = Rig()
        try rig.handshake()
        // revoke carries a signed object and is tested in KeysRevocationTests; the two ranging
        // commands are answered by the engine and need a UWB module (RangingEngineTests).
        for command in CommandCode.allCases where ![.revoke, .rangingSetup, .rangingCapabilities].contains(command) {
            let response = try rig.run(command)
            XCTAssertTrue(response.isOK, "\(command)")
            XCTAssertEqual(response.command, command)
        }
    }

    func testOnlyAcceptedCommandsThatMoveAnActuatorAreAuditedBeforeTheirPerform() throws {
        var rig = sharedRig(.unlock)
        try rig.handshake()
        for command in [CommandCode.unlock, .status, .userVerified] {
            let actions = try rig.send(command)
            let request = try XCTUnwrap(actions.performs.first, "\(command)")
            XCTAssertEqual(actions.audits.map(\.event), command.movesActuator ? [.commandAccepted] : [], "\(command)")
            XCTAssertTrue(try rig.phoneResponse(rig.car.complete(request.token, result: nil, vehicleState: [], now: rig.now)).isOK)
        }
        let refused = try rig.send(.lock)
        XCTAssertEqual(refused.audits.map(\.event), [.rejected], "a refused command is never announced as accepted")
        XCTAssertTrue(refused.performs.isEmpty)
    }

    func testPermissionChecks() throws {
        var rig = sharedRig(.unlock)
        try rig.handshake()
        XCTAssertEqual(rig.phone.sessionInfo?.role, .shared)
        XCTAssertTrue(try rig.run(.unlock).isOK)
        XCTAssertEqual(try rig.run(.lock).fault, .insufficientPermission)
        XCTAssertEqual(try rig.run(.trunkRelease).fault, .insufficientPermission)
        XCTAssertTrue(try rig.run(.status).isOK, "status needs any valid key")
        XCTAssertTrue(try rig.run(.userVerified).isOK, "userVerified needs any valid key")

        var trunkOnly = sharedRig(.trunk)
        try trunkOnly.handshake()
        XCTAssertTrue(try trunkOnly.run(.trunkRelease).isOK)
        XCTAssertEqual(try trunkOnly.run(.unlock).fault, .insufficientPermission)
        var lockOnly = sharedRig(.lock)
        try lockOnly.handshake()
        XCTAssertTrue(try lockOnly.run(.lock).isOK)
        XCTAssertEqual(try lockOnly.run(.unlock).fault, .insufficientPermission)
    }

    func testRefusalIsAuditedAndPerformsNothing() throws {
        var rig = sharedRig(.unlock)
        try rig.handshake()
        let actions = try rig.send(.lock)
        XCTAssertTrue(actions.performs.isEmpty)
        XCTAssertEqual(actions.audits.first?.event, .rejected)
        XCTAssertEqual(actions.audits.first?.command, .lock)
        XCTAssertEqual(actions.audits.first?.fault, .insufficientPermission)
    }

    func testReplayedCommandCounter() throws {
        var rig = Rig()
        try rig.handshake()
        let unlock = try rig.phone.command(.unlock, now: rig.now)
        let first = rig.toCar(unlock)
        let token = try XCTUnwrap(first.performs.first).token
        _ = try rig.phoneResponse(rig.car.complete(token, result: nil, vehicleState: [], now: rig.now))
        let replay = rig.toCar(unlock)
        XCTAssertTrue(replay.performs.isEmpty)
        XCTAssertEqual(try rig.phoneResponse(replay).fault, .replayedCounter)
    }

    func testOutOfOrderCommandCounter() throws {
        var rig = Rig()
        try rig.handshake()
        let lock = try rig.phone.command(.lock, now: rig.now)        // counter 1, held back
        rig.phone.forgetPendingForTest()
        let unlock = try rig.phone.command(.unlock, now: rig.now)    // counter 2
        let token = try XCTUnwrap(rig.toCar(unlock).performs.first).token
        _ = try rig.phoneResponse(rig.car.complete(token, result: nil, vehicleState: [], now: rig.now))
        let late = rig.toCar(lock)
        XCTAssertTrue(late.performs.isEmpty)
        XCTAssertEqual(try rig.phoneResponse(late).fault, .outOfOrderCounter)
    }

    func testRefusedCommandStillSpendsItsCounter() throws {
        var rig = sharedRig(.unlock)
        try rig.handshake()
        let lock = try rig.phone.command(.lock, now: rig.now)
        XCTAssertEqual(try rig.phoneResponse(rig.toCar(lock)).fault, .insufficientPermission)
        XCTAssertEqual(try rig.phoneResponse(rig.toCar(lock)).fault, .replayedCounter)
    }

    func testBusyWhileACommandIsInFlight() throws {
        var rig = Rig()
        try rig.handshake()
        let first = try rig.send(.unlock)
        XCTAssertEqual(first.performs.count, 1)
        rig.phone.forgetPendingForTest()
        let second = try rig.send(.lock)
        XCTAssertTrue(second.performs.isEmpty)
        XCTAssertEqual(try rig.phoneResponse(second).fault, .busy)
        let done = rig.car.complete(first.performs[0].token, result: nil, vehicleState: [], now: rig.now)
        XCTAssertTrue(try rig.phoneResponse(done).isOK)
    }

    func testTamperedCommandIsRefusedAndChangesNothing() throws {
        var rig = Rig(configure: { $0.rateLimit = RateLimitPolicy(failureThreshold: 100) })
        try rig.handshake()
        let unlock = try rig.phone.command(.unlock, now: rig.now)
        // type byte -> a Response type (not accepted from a phone); version; counter; ciphertext; tag.
        let expected: [(Int, FaultCode)] = [(0, .unexpectedMessage), (1, .unsupportedVersion), (5, .decryptionFailed),
                                            (9, .decryptionFailed), (10, .decryptionFailed), (unlock.count - 1, .decryptionFailed)]
        for (index, fault) in expected {
            var tampered = unlock
            tampered[index] ^= 0x01
            let actions = rig.toCar(tampered)
            XCTAssertTrue(actions.performs.isEmpty, "byte \(index)")
            XCTAssertEqual(try rig.phoneResponse(actions).fault, fault, "byte \(index)")
        }
        XCTAssertEqual(rig.toCar(unlock).performs.count, 1, "the genuine command still runs")
    }

    func testTamperedCommandDoesNotConsumeCounter() throws {
        var rig = Rig()
        try rig.handshake()
        let unlock = try rig.phone.command(.unlock, now: rig.now)
        var tampered = unlock
        tampered[12] ^= 0x01
        XCTAssertEqual(try rig.phoneResponse(rig.toCar(tampered)).fault, .decryptionFailed)
        XCTAssertEqual(rig.toCar(unlock).performs.count, 1, "the genuine command still runs")
    }

    func testExpiredCommand() throws {
        var rig = Rig()
        try rig.handshake()
        let unlock = try rig.phone.command(.unlock, now: rig.now) // expires carTime + 10
        rig.advance(seconds: 11)
        let actions = rig.toCar(unlock)
        XCTAssertTrue(actions.performs.isEmpty)
        XCTAssertEqual(try rig.phoneResponse(actions).fault, .expiredCommand)
    }

    func testCommandAtItsExpirySecondIsAccepted() throws {
        var rig = Rig()
        try rig.handshake()
        let unlock = try rig.phone.command(.unlock, now: rig.now)
        rig.advance(seconds: 10.999)
        XCTAssertEqual(rig.toCar(unlock).performs.count, 1)
    }

    func testExpiryUsesSessionClockEvenWhenWallClockIsUntrustedAndJumps() throws {
        var rig = Rig(trusted: false)
        try rig.handshake()
        let unlock = try rig.phone.command(.unlock, now: rig.now)
        rig.now.wallSeconds -= 1_000_000 // wall clock set back: irrelevant to the session clock
        rig.advance(seconds: 12)
        XCTAssertEqual(try rig.phoneResponse(rig.toCar(unlock)).fault, .expiredCommand)
    }

    func testLifetimeTooLong() throws {
        var rig = Rig(configurePhone: { $0.commandLifetimeSeconds = 31 })
        try rig.handshake()
        let actions = try rig.send(.unlock)
        XCTAssertTrue(actions.performs.isEmpty)
        XCTAssertEqual(try rig.phoneResponse(actions).fault, .lifetimeTooLong)
        var ok = Rig(configurePhone: { $0.commandLifetimeSeconds = 30 })
        try ok.handshake()
        XCTAssertEqual(try ok.send(.unlock).performs.count, 1)
    }

    func testSessionExpires() throws {
        var rig = Rig()
        try rig.handshake()
        let command = try rig.phone.command(.status, now: rig.now)
        rig.advance(seconds: 300)
        let actions = rig.toCar(command)
        XCTAssertTrue(actions.performs.isEmpty)
        XCTAssertEqual(actions.closed, [rig.link])
        XCTAssertEqual(try rig.phoneResponse(actions).fault, .sessionExpired)
        XCTAssertFalse(rig.phone.isEstablished)
        XCTAssertTrue(rig.car.establishedLinks.isEmpty)
    }

    func testTickClosesExpiredSessions() throws {
        var rig = Rig()
        try rig.handshake()
        rig.advance(seconds: 299)
        XCTAssertTrue(rig.car.tick(now: rig.now).isEmpty)
        rig.advance(seconds: 1)
        let actions = rig.car.tick(now: rig.now)
        XCTAssertEqual(actions.closed, [rig.link])
        XCTAssertEqual(actions.audits.map(\.event), [.sessionClosed])
    }

    func testTerminateSessionsOnRevocationTakesEffectAtOnce() throws {
        var rig = Rig()
        try rig.handshake()
        let keyID = KeyID(publicKey: Fixtures.phoneKey.publicKey)
        let inFlight = try rig.send(.unlock).performs[0]
        rig.directory.revoke(keyID)
        let actions = rig.car.terminateSessions(of: keyID, now: rig.now)
        XCTAssertEqual(actions.closed, [rig.link])
        XCTAssertEqual(try rig.phoneResponse(actions).fault, .revoked)
        XCTAssertFalse(rig.phone.isEstablished)
        // The agent's late completion is audited but nothing is sent.
        let late = rig.car.complete(inFlight.token, result: nil, vehicleState: [], now: rig.now)
        XCTAssertTrue(late.sent.isEmpty)
        XCTAssertEqual(late.audits.map(\.event), [.completionDropped])
    }

    func testRevocationInDirectoryIsSeenByTheNextCommand() throws {
        var rig = Rig()
        try rig.handshake()
        rig.directory.revoke(KeyID(publicKey: Fixtures.phoneKey.publicKey))
        let actions = try rig.send(.unlock)
        XCTAssertTrue(actions.performs.isEmpty)
        XCTAssertEqual(actions.closed, [rig.link])
        XCTAssertEqual(try rig.phoneResponse(actions).fault, .revoked)
    }

    func testKeyExpiringDuringSession() throws {
        var rig = sharedRig(.unlock, notAfter: UInt32(Fixtures.wallStart) + 5)
        try rig.handshake()
        XCTAssertTrue(try rig.run(.unlock).isOK)
        rig.advance(seconds: 6)
        XCTAssertEqual(try rig.run(.unlock).fault, .expired)
    }

    func testUnexpectedCleartextInsideSession() throws {
        var rig = Rig()
        try rig.handshake()
        var other = Rig().phone
        let actions = rig.toCar(try other.start())
        XCTAssertEqual(try rig.phoneResponse(actions).fault, .unexpectedMessage)
        XCTAssertEqual(rig.car.establishedLinks, [rig.link], "an injected Hello does not tear the session down")
        XCTAssertTrue(try rig.run(.status).isOK)
    }

    func testActuationFailureIsReported() throws {
        var rig = Rig()
        try rig.handshake()
        let request = try rig.send(.trunkRelease).performs[0]
        let done = rig.car.complete(request.token, result: .actuationFailed, vehicleState: [.locked], now: rig.now)
        XCTAssertEqual(done.audits.first?.fault, .actuationFailed)
        let response = try rig.phoneResponse(done)
        XCTAssertEqual(response.fault, .actuationFailed)
        XCTAssertEqual(response.vehicleState, [.locked])
    }

    func testCarCounterExhaustionEndsTheSession() throws {
        var rig = Rig(configure: { $0.maxRecordCounter = 2 })
        try rig.handshake()
        XCTAssertTrue(try rig.run(.status).isOK)   // car counter 1
        XCTAssertTrue(try rig.run(.status).isOK)   // car counter 2
        let request = try rig.send(.status).performs[0]
        let actions = rig.car.complete(request.token, result: nil, vehicleState: [], now: rig.now)
        XCTAssertTrue(actions.sent.isEmpty, "no record beyond the limit")
        XCTAssertEqual(actions.closed, [rig.link])
    }

    func testPhoneCounterExhaustion() throws {
        var rig = Rig(configurePhone: { $0.maxRecordCounter = 1 })
        try rig.handshake()
        XCTAssertTrue(try rig.run(.status).isOK)
        XCTAssertThrowsError(try rig.phone.command(.status, now: rig.now)) { XCTAssertEqual($0 as? PhoneError, .sessionExhausted) }
    }

    func testPhoneRefusesReplayedOrReorderedResponses() throws {
        var rig = Rig()
        try rig.handshake()
        let request1 = try rig.send(.status).performs[0]
        let response1 = try XCTUnwrap(rig.car.complete(request1.token, result: nil, vehicleState: [], now: rig.now).sent.first)
        _ = try rig.phone.receive(response1, now: rig.now)
        XCTAssertThrowsError(try rig.phone.receive(response1, now: rig.now)) { XCTAssertEqual($0 as? PhoneError, .replayedCounter) }
        let request2 = try rig.send(.status).performs[0]
        let response2 = try XCTUnwrap(rig.car.complete(request2.token, result: nil, vehicleState: [], now: rig.now).sent.first)
        rig.phone.forgetPendingForTest()
        let request3 = try rig.send(.status).performs[0]
        let response3 = try XCTUnwrap(rig.car.complete(request3.token, result: nil, vehicleState: [], now: rig.now).sent.first)
        _ = try rig.phone.receive(response3, now: rig.now)
        XCTAssertThrowsError(try rig.phone.receive(response2, now: rig.now)) { XCTAssertEqual($0 as? PhoneError, .outOfOrderCounter) }
    }

    func testPhoneAllowsOneCommandAtATime() throws {
        var rig = Rig()
        try rig.handshake()
        _ = try rig.phone.command(.unlock, now: rig.now)
        XCTAssertThrowsError(try rig.phone.command(.lock, now: rig.now)) { XCTAssertEqual($0 as? PhoneError, .commandPending) }
    }
}
