// The rangingSetup command in the car engine (docs/protocol.md section 19, rule S9b): the car
// and the phone derive the same material, the session's end stops ranging, and every value
// the car cannot use is refused with a fault.
import XCTest
@testable import Protocol

final class RangingEngineTests: XCTestCase {
    func uwbRig(_ record: KeyRecord? = nil, capabilities: UWBCapabilities? = UWBCapabilities()) -> Rig {
        Rig(record: record, configure: { $0.uwb = capabilities })
    }

    func grants(_ actions: [CarAction]) -> [RangingGrant] {
        actions.compactMap { if case .startRanging(let grant) = $0 { return grant } else { return nil } }
    }

    func stops(_ actions: [CarAction]) -> [LinkID] {
        actions.compactMap { if case .stopRanging(let link) = $0 { return link } else { return nil } }
    }

    func testSetupStartsRangingWithTheSameMaterialOnBothSides() throws {
        var rig = uwbRig()
        try rig.handshake()
        let setup = try RangingSetup.random(using: SeededRandom("phone setup"))
        let actions = rig.toCar(try rig.phone.rangingSetupCommand(setup, now: rig.now))
        let grant = try XCTUnwrap(grants(actions).first, "\(actions)")
        XCTAssertEqual(grant.link, rig.link)
        XCTAssertEqual(grant.keyID, KeyID(publicKey: Fixtures.phoneKey.publicKey))
        XCTAssertEqual(grant.record.permissions, .all)
        XCTAssertEqual(grant.setup, setup)
        XCTAssertEqual(grant.material, try rig.phone.rangingMaterial(for: setup))
        XCTAssertTrue(actions.performs.isEmpty, "nothing to actuate")
        XCTAssertEqual(actions.audits.map(\.event), [.commandCompleted])
        let response = try rig.phoneResponse(actions)
        XCTAssertTrue(response.isOK)
        XCTAssertEqual(response.command, .rangingSetup)
        XCTAssertFalse("\(grant)".contains(grant.material.frameKey.hexString), "no key in descriptions")

        // And the two roles built from each side's material range with each other.
        var initiator = DSTWRInitiator(material: try rig.phone.rangingMaterial(for: setup), txAntennaDelayUnits: 16385,
                                       random: SeededRandom("i"))
        var responder = DSTWRResponder(material: grant.material, random: SeededRandom("r"))
        let distance = IdealRadio(metres: 3).run(&initiator, &responder).responder?.measurement?.distanceMetres
        XCTAssertEqual(distance ?? -1, 3, accuracy: 0.01)
    }

    func testEitherSideDerivesTheKeyFromTheHandshake() throws {
        var rig = uwbRig()
        try rig.handshake()
        XCTAssertThrowsError(try PhoneProtocolSession(configuration: rig.phone.configuration).rangingMaterial(for: RangingFixtures.setup)) {
            XCTAssertEqual($0 as? PhoneError, .notEstablished)
        }
        let other = try RangingSetup(sessionID: 99)
        let actions = rig.toCar(try rig.phone.rangingSetupCommand(other, now: rig.now))
        XCTAssertEqual(grants(actions).first?.material, try rig.phone.rangingMaterial(for: other))
        // A second handshake gives a different ranging key: same setup, other material.
        var second = Rig(configure: { $0.uwb = UWBCapabilities() }, random: SeededRandom("another handshake"))
        try second.handshake()
        XCTAssertNotEqual(try second.phone.rangingMaterial(for: other), grants(actions).first?.material)
    }

    func testAnyValidKeyMaySetUpRanging() throws {
        var rig = uwbRig(KeyRecord(publicKey: Fixtures.phoneKey.publicKey, role: .shared, permissions: .lock))
        try rig.handshake()
        let actions = rig.toCar(try rig.phone.rangingSetupCommand(RangingFixtures.setup, now: rig.now))
        XCTAssertEqual(grants(actions).first?.record.permissions, .lock)
        XCTAssertTrue(try rig.phoneResponse(actions).isOK)
    }

    func testCarWithoutUWBRefuses() throws {
        var rig = uwbRig(capabilities: nil)
        try rig.handshake()
        let actions = rig.toCar(try rig.phone.rangingSetupCommand(RangingFixtures.setup, now: rig.now))
        XCTAssertTrue(grants(actions).isEmpty)
        XCTAssertEqual(try rig.phoneResponse(actions).fault, .rangingUnsupported)
        XCTAssertEqual(actions.audits.map(\.event), [.rejected])
        XCTAssertEqual(rig.car.establishedLinks, [rig.link], "the session stays")
    }

    func testValuesThisCarCannotUseAreRefused() throws {
        var capabilities = UWBCapabilities()
        capabilities.channels = [9]
        capabilities.minReplyDelayMicros = 2000
        var rig = uwbRig(capabilities: capabilities)
        try rig.handshake()
        for setup in [try RangingSetup(sessionID: 1, channel: 5, replyDelayMicros: 2000),
                      try RangingSetup(sessionID: 2, channel: 9, replyDelayMicros: 1999)] {
            let actions = rig.toCar(try rig.phone.rangingSetupCommand(setup, now: rig.now))
            XCTAssertTrue(grants(actions).isEmpty)
            XCTAssertEqual(try rig.phoneResponse(actions).fault, .rangingUnsupported, "\(setup)")
        }
        let ok = rig.toCar(try rig.phone.rangingSetupCommand(try RangingSetup(sessionID: 3, channel: 9, replyDelayMicros: 2000), now: rig.now))
        XCTAssertEqual(grants(ok).count, 1)
    }

    func testMalformedAndUnsupportedArguments() throws {
        var rig = uwbRig()
        try rig.handshake()
        var bytes = RangingFixtures.setup.encoded()
        bytes[7] = 100  // STS length
        XCTAssertEqual(try rig.phoneResponse(rig.toCar(try rig.phone.command(.rangingSetup, args: bytes, now: rig.now))).fault,
                       .rangingUnsupported)
        XCTAssertEqual(try rig.phoneResponse(rig.toCar(try rig.phone.command(.rangingSetup, args: [], now: rig.now))).fault,
                       .malformedMessage)
        XCTAssertEqual(try rig.phoneResponse(rig.toCar(try rig.phone.command(.rangingSetup, args: Array(bytes.prefix(10)), now: rig.now))).fault,
                       .malformedMessage)
        XCTAssertFalse(FaultCode.rangingUnsupported.countsTowardRateLimit)
    }

    func testSecondSetupReplacesTheFirstButNeedsANewSessionID() throws {
        var rig = uwbRig()
        try rig.handshake()
        let first = try RangingSetup(sessionID: 0x1111)
        let started = rig.toCar(try rig.phone.rangingSetupCommand(first, now: rig.now))
        XCTAssertEqual(grants(started).count, 1)
        XCTAssertTrue(try rig.phoneResponse(started).isOK)
        let again = rig.toCar(try rig.phone.rangingSetupCommand(first, now: rig.now))
        XCTAssertTrue(grants(again).isEmpty)
        XCTAssertEqual(try rig.phoneResponse(again).fault, .rangingUnsupported, "a reused session ID would repeat the STS")
        let second = try RangingSetup(sessionID: 0x2222, channel: 5)
        let replaced = rig.toCar(try rig.phone.rangingSetupCommand(second, now: rig.now))
        XCTAssertEqual(grants(replaced).map(\.setup), [second])
        XCTAssertTrue(stops(replaced).isEmpty, "startRanging for a ranging link replaces its role")
    }

    func testSetupsPerSessionAreBounded() throws {
        var rig = uwbRig()
        try rig.handshake()
        for id in 1...UInt32(CarRangingPolicy.maxSetupsPerSession) {
            let actions = rig.toCar(try rig.phone.rangingSetupCommand(try RangingSetup(sessionID: id), now: rig.now))
            XCTAssertTrue(try rig.phoneResponse(actions).isOK)
        }
        let over = rig.toCar(try rig.phone.rangingSetupCommand(try RangingSetup(sessionID: 999), now: rig.now))
        XCTAssertEqual(try rig.phoneResponse(over).fault, .rangingUnsupported)
    }

    func testSessionEndStopsRanging() throws {
        // Expiry.
        var rig = uwbRig()
        try rig.handshake()
        XCTAssertTrue(try rig.phoneResponse(rig.toCar(try rig.phone.rangingSetupCommand(RangingFixtures.setup, now: rig.now))).isOK)
        rig.advance(seconds: 300)
        let expired = rig.car.tick(now: rig.now)
        XCTAssertEqual(stops(expired), [rig.link])
        XCTAssertEqual(expired.closed, [rig.link])

        // Revocation.
        var revoked = uwbRig()
        try revoked.handshake()
        _ = revoked.toCar(try revoked.phone.rangingSetupCommand(RangingFixtures.setup, now: revoked.now))
        let keyID = KeyID(publicKey: Fixtures.phoneKey.publicKey)
        revoked.directory.revoke(keyID)
        XCTAssertEqual(stops(revoked.car.terminateSessions(of: keyID, now: revoked.now)), [revoked.link])

        // Disconnect.
        var dropped = uwbRig()
        try dropped.handshake()
        _ = dropped.toCar(try dropped.phone.rangingSetupCommand(RangingFixtures.setup, now: dropped.now))
        XCTAssertEqual(stops(dropped.car.linkClosed(dropped.link, now: dropped.now)), [dropped.link])
    }

    func testNoStopWithoutStart() throws {
        var rig = uwbRig()
        try rig.handshake()
        rig.advance(seconds: 300)
        XCTAssertTrue(stops(rig.car.tick(now: rig.now)).isEmpty)
        var other = uwbRig()
        try other.handshake()
        XCTAssertTrue(stops(other.car.linkClosed(other.link, now: other.now)).isEmpty)
    }

    func testEngineNeverSendsNotInProximity() throws {
        // The agent's proximity policy does, through complete(_:result:...): the engine passes it on.
        var rig = uwbRig()
        try rig.handshake()
        let request = try XCTUnwrap(try rig.send(.unlock).performs.first)
        let response = try rig.phoneResponse(rig.car.complete(request.token, result: .notInProximity, vehicleState: [.locked], now: rig.now))
        XCTAssertEqual(response.fault, .notInProximity)
        XCTAssertEqual(response.command, .unlock)
    }

    // MARK: rangingCapabilities (0x08, rule S9c)

    /// A module with only the less common values: the phone that asks first proposes a setup
    /// the car takes, where the preferred values would be refused.
    func testThePhoneLearnsTheCapabilitiesAndProposesASetupTheCarAccepts() throws {
        var capabilities = UWBCapabilities()
        capabilities.channels = [5]
        capabilities.preambleCodes = [11]
        capabilities.stsLengths = [128]
        capabilities.minReplyDelayMicros = 2500
        capabilities.minRoundIntervalMillis = 200
        var rig = uwbRig(KeyRecord(publicKey: Fixtures.phoneKey.publicKey, role: .shared, permissions: .lock), capabilities: capabilities)
        try rig.handshake()
        let preferred = try RangingSetup.random(using: SeededRandom("preferred"))
        XCTAssertEqual(try rig.phoneResponse(rig.toCar(try rig.phone.rangingSetupCommand(preferred, now: rig.now))).fault,
                       .rangingUnsupported, "the preferred values do not fit this module")

        XCTAssertNil(rig.phone.carRangingCapabilities)
        let asked = rig.toCar(try rig.phone.rangingCapabilitiesCommand(now: rig.now))
        XCTAssertTrue(grants(asked).isEmpty && asked.performs.isEmpty, "a question changes nothing")
        XCTAssertEqual(asked.audits.map(\.event), [.commandCompleted])
        let response = try rig.phoneResponse(asked)
        XCTAssertTrue(response.isOK)
        XCTAssertEqual(response.command, .rangingCapabilities)
        XCTAssertEqual(rig.phone.carRangingCapabilities, capabilities, "any valid key learns them")

        let setup = try capabilities.proposal(using: SeededRandom("proposal"), roundIntervalMillis: 50)
        XCTAssertEqual([setup.channel, setup.preambleCode, setup.stsLength], [5, 11, 128])
        XCTAssertEqual(setup.replyDelayMicros, 2500)
        XCTAssertEqual(setup.roundIntervalMillis, 200)
        let started = rig.toCar(try rig.phone.rangingSetupCommand(setup, now: rig.now))
        XCTAssertEqual(grants(started).map(\.setup), [setup])
        XCTAssertTrue(try rig.phoneResponse(started).isOK)
    }

    func testProposalKeepsThePreferredValuesWhenOffered() throws {
        let setup = try UWBCapabilities().proposal(using: SeededRandom("p"))
        XCTAssertEqual([setup.channel, setup.preambleCode, setup.stsLength], [9, 9, 64])
        XCTAssertEqual(setup.replyDelayMicros, 1000)
        XCTAssertEqual(setup.roundIntervalMillis, 100)
    }

    func testCapabilitiesOfACarWithoutUWBAndWithArguments() throws {
        var none = uwbRig(capabilities: nil)
        try none.handshake()
        let refused = none.toCar(try none.phone.rangingCapabilitiesCommand(now: none.now))
        let response = try none.phoneResponse(refused)
        XCTAssertEqual(response.fault, .rangingUnsupported)
        XCTAssertEqual(response.command, .rangingCapabilities)
        XCTAssertNil(none.phone.carRangingCapabilities)
        XCTAssertEqual(none.car.establishedLinks, [none.link], "the session stays")

        var rig = uwbRig()
        try rig.handshake()
        XCTAssertEqual(try rig.phoneResponse(rig.toCar(try rig.phone.command(.rangingCapabilities, args: [1], now: rig.now))).fault,
                       .malformedMessage)
        XCTAssertNil(rig.phone.carRangingCapabilities)
    }

    /// A car older than 0x08 answers malformedMessage with command byte 0x00 (rule S5): a
    /// nine-byte Response, which the phone reads as any refusal.
    func testAnOldCarsRefusalIsAPlainResponse() throws {
        var rig = uwbRig()
        try rig.handshake()
        _ = try rig.phone.rangingCapabilitiesCommand(now: rig.now)
        guard case .established(var session)? = rig.car.links[rig.link] else { return XCTFail("no session") }
        let old = ResponseBody(command: nil, fault: .malformedMessage, vehicleState: [], carTime: 0).encoded()
        let bytes = try session.channel.seal(.response, old)
        guard case .response(let body) = try rig.phone.receive(bytes, now: rig.now) else { return XCTFail("not a Response") }
        XCTAssertEqual(body.fault, .malformedMessage)
        XCTAssertEqual(body.commandByte, ResponseBody.noCommand)
        XCTAssertNil(rig.phone.carRangingCapabilities)
    }

    /// The phone refuses a capabilities answer that breaks 19.2 (here: a mask with no value).
    func testStrictCapabilitiesDecoding() throws {
        XCTAssertNoThrow(try UWBCapabilities.decode(Bytes(testHex: "0102010203e80032")))
        for bad in ["0100010203e80032", "0104010203e80032", "0102100203e80032", "0102010803e80032", "02020102 03e80032",
                    "0102010201f30032", "0102010203e80031", "0102010203e8003200", "0102010203e800"] {
            XCTAssertThrowsError(try UWBCapabilities.decode(Bytes(testHex: bad.replacingOccurrences(of: " ", with: ""))), bad)
        }
        XCTAssertThrowsError(try RangingCapabilitiesAnswer.decode(Bytes(testHex: "04000000116955b9000102010203e80032")), "not an answer to 0x08")
        XCTAssertThrowsError(try RangingCapabilitiesAnswer.decode(Bytes(testHex: "08002200116955b9000102010203e80032")), "not ok")
    }
}
