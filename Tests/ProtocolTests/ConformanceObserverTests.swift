// Conformance mode's observer (Sources/Protocol/Conformance): a phone and the car engine back
// to back, every message and answer also handed to the observer, and the findings it makes of
// them checked rule by rule. Misbehaviour is written as bytes where it can be.
import XCTest
@testable import Protocol

/// The Rig with an observer beside the engine: it sees every message and the engine's answer.
private struct ObservedRig {
    var rig: Rig
    var observer: ConformanceObserver

    init(trusted: Bool = true, record: KeyRecord? = nil, deadline: UInt64? = 3_000) {
        rig = Rig(record: record, trusted: trusted)
        observer = ConformanceObserver(configuration: rig.car.configuration, handshakeDeadlineMillis: deadline)
        observer.linkOpened(rig.link, transport: "unix", now: rig.now)
    }

    var link: LinkID { rig.link }
    var report: ConformanceLinkReport { observer.report(of: rig.link)! }

    /// Sends `bytes` from the phone; the car's actions and the observer's findings.
    @discardableResult
    mutating func toCar(_ bytes: Bytes) -> (actions: [CarAction], findings: [ConformanceFinding]) {
        let actions = rig.toCar(bytes)
        return (actions, observer.message(bytes, on: rig.link, now: rig.now, answer: actions))
    }

    /// Hello -> Challenge; the Challenge bytes.
    mutating func hello() throws -> Bytes {
        let (actions, findings) = toCar(try rig.phone.start())
        XCTAssertEqual(findings, [])
        return try XCTUnwrap(actions.sent.first)
    }

    /// A whole handshake the way the phone rules say.
    mutating func handshake() throws {
        let challenge = try hello()
        guard case .send(let auth) = try rig.phone.receive(challenge, now: rig.now) else { return XCTFail("no AuthResponse") }
        let (actions, findings) = toCar(auth)
        XCTAssertEqual(findings, [])
        guard case .established = try rig.phone.receive(try XCTUnwrap(actions.sent.first), now: rig.now) else {
            return XCTFail("not established")
        }
    }

    /// A command with its completion and the phone reading the Response.
    mutating func command(_ code: CommandCode) throws -> [ConformanceFinding] {
        let (actions, findings) = toCar(try rig.phone.command(code, now: rig.now))
        var answer = actions
        if let request = actions.performs.first {
            answer = rig.car.complete(request.token, result: nil, vehicleState: [.locked], now: rig.now)
            _ = observer.carActions(answer, now: rig.now)
        }
        if let response = answer.sent.first { _ = try rig.phone.receive(response, now: rig.now) }
        return findings
    }

    /// Any plaintext sealed as the phone's next Command record (expiry, pipelining).
    mutating func sealed(_ body: CommandBody) throws -> Bytes {
        try rig.phone.sealAnyPlaintext(.command, body.encoded())
    }
}

final class ConformanceObserverTests: XCTestCase {
    private func only(_ findings: [ConformanceFinding], file: StaticString = #filePath, line: UInt = #line) throws -> ConformanceFinding {
        XCTAssertEqual(findings.count, 1, "\(findings.map(\.line))", file: file, line: line)
        return try XCTUnwrap(findings.first, file: file, line: line)
    }

    func testAPhoneThatFollowsTheRulesGetsACleanChecklist() throws {
        var rig = ObservedRig()
        try rig.handshake()
        XCTAssertEqual(try rig.command(.unlock), [])
        rig.rig.advance(seconds: 1)
        XCTAssertEqual(try rig.command(.status), [])
        let (_, report) = try XCTUnwrap(rig.observer.linkEnded(rig.link, .phoneClosed, now: rig.rig.now))
        XCTAssertTrue(report.isClean)
        XCTAssertEqual(report.findings, [])
        let passed = Dictionary(uniqueKeysWithValues: report.checks.map { ($0.rule, $0.passed) })
        XCTAssertEqual(passed[.framing], 4)
        XCTAssertEqual(passed[.decode], 2, "Hello and AuthResponse; commands are decoded inside the session")
        XCTAssertEqual(passed[.challengeLifetime], 1)
        XCTAssertEqual(passed[.timestamp], 1, "checked: the car clock is trusted")
        XCTAssertEqual(passed[.handshakeDeadline], 1)
        XCTAssertEqual(passed[.counter], 2)
        XCTAssertEqual(passed[.counterSequence], 2)
        XCTAssertEqual(passed[.oneHello], 1)
        XCTAssertEqual(passed[.helloRate], 1)
        XCTAssertTrue(report.checks.allSatisfy { $0.failed == 0 })
        XCTAssertNil(passed[.slot], "the car's own conditions are not the phone's to pass")
        XCTAssertEqual(report.timings.commands, 2)
        XCTAssertEqual(report.end, .phoneClosed)
        let lines = report.checklistLines(nowMillis: rig.rig.now.monotonicMillis)
        XCTAssertTrue(lines[0].hasPrefix("link#7 summary: key \(KeyID(publicKey: Fixtures.phoneKey.publicKey)), unix, 1000 ms, "
                                         + "ended: the phone closed it; 0 deviation(s), 0 refusal(s)"), lines[0])
        XCTAssertTrue(lines.contains("link#7 check A3 ok 1 of 1: the AuthResponse arrives within the challenge lifetime"), "\(lines)")
        XCTAssertTrue(lines.last!.hasPrefix("link#7 not exercised: 16-backlog"), lines.last!)
    }

    func testTimestampIsNotCheckedOnAnUntrustedClock() throws {
        var rig = ObservedRig(trusted: false)
        try rig.handshake()
        XCTAssertNil(rig.report.checks.first { $0.rule == .timestamp })
        XCTAssertTrue(rig.report.isClean)
    }

    func testLateAuthResponseIsRuleA3WithItsDelay() throws {
        var rig = ObservedRig()
        let challenge = try rig.hello()
        guard case .send(let auth) = try rig.rig.phone.receive(challenge, now: rig.rig.now) else { return XCTFail() }
        rig.rig.advance(seconds: 10.5)
        let finding = try only(rig.toCar(auth).findings)
        XCTAssertEqual(finding.rule, .challengeLifetime)
        XCTAssertEqual(finding.fault, .challengeExpired)
        XCTAssertTrue(finding.isDeviation)
        XCTAssertEqual(finding.detail, "AuthResponse 10500 ms after its Challenge; the challenge lifetime is 10000 ms")
        XCTAssertEqual(finding.line, "link#7 deviation A3 (protocol.md 11 A3) +10500 ms: AuthResponse 10500 ms after its "
                       + "Challenge; the challenge lifetime is 10000 ms [car answered challengeExpired]")
        // The same AuthResponse again: still this link's expired challenge (rule A3).
        let again = try only(rig.toCar(auth).findings)
        XCTAssertEqual(again.rule, .challengeLifetime)
        XCTAssertEqual(again.fault, .challengeExpired)
        XCTAssertEqual(again.detail, "AuthResponse for a Challenge that expired unanswered; the challenge lifetime is 10000 ms")
    }

    func testAuthResponseBeforeAnyHelloIsRuleA1() throws {
        var rig = ObservedRig()
        // AA BB 01, a challenge of 32 bytes 0x11, timestamp 0, and a 64-byte raw signature.
        let bytes = Bytes(hex: "aabb01" + String(repeating: "11", count: 32) + "00000000" + String(repeating: "22", count: 64))!
        let finding = try only(rig.toCar(bytes).findings)
        XCTAssertEqual(finding.rule, .challenge)
        XCTAssertEqual(finding.fault, .unknownChallenge)
        XCTAssertEqual(finding.detail, "AuthResponse before any Challenge on this link: send a Hello and answer its Challenge")
        XCTAssertEqual(rig.report.checks.first { $0.rule == .decode }?.passed, 1)
    }

    func testCommandBeforeSessionIsRuleR2() throws {
        var rig = ObservedRig()
        // A Command record: 10 01, counter 1, 6 bytes of "ciphertext", a 16-byte tag.
        let record = Bytes(hex: "1001" + "0000000000000001" + "010000000a00" + String(repeating: "00", count: 16))!
        let finding = try only(rig.toCar(record).findings)
        XCTAssertEqual(finding.rule, .order)
        XCTAssertEqual(finding.fault, .unexpectedMessage)
        XCTAssertEqual(finding.detail, "a Command record before any session: the order is Hello, Challenge, AuthResponse, SessionAccepted")
    }

    func testUndecodableBytesAreRuleR1WithTheField() throws {
        var rig = ObservedRig()
        // AA followed by CC: a wrong second header byte is malformed, not an unknown type.
        let finding = try only(rig.toCar(Bytes(hex: "aacc01")!).findings)
        XCTAssertEqual(finding.rule, .decode)
        XCTAssertEqual(finding.fault, .malformedMessage)
        XCTAssertTrue(finding.detail.hasPrefix("the message does not decode: "), finding.detail)
        let version = try only(rig.toCar(Bytes(hex: "0102")!).findings)
        XCTAssertEqual(version.rule, .decode)
        XCTAssertEqual(version.fault, .unsupportedVersion)
    }

    func testRepeatedAndOlderCountersAreRuleS4() throws {
        var rig = ObservedRig()
        try rig.handshake()
        let first = try rig.rig.phone.command(.status, now: rig.rig.now)
        let accepted = rig.toCar(first)
        XCTAssertEqual(accepted.findings, [])
        let request = try XCTUnwrap(accepted.actions.performs.first)
        _ = rig.observer.carActions(rig.rig.car.complete(request.token, result: nil, vehicleState: [.locked], now: rig.rig.now),
                                    now: rig.rig.now)
        let replay = try only(rig.toCar(first).findings)
        XCTAssertEqual(replay.rule, .counter)
        XCTAssertEqual(replay.fault, .replayedCounter)
        XCTAssertEqual(replay.detail, "Command counter 1 repeats the last accepted counter: every Command, also a repeated one, "
                       + "needs a new counter")
        // Counter 5 is accepted with a gap (12.4, tolerated); then 3 is below it.
        var records: [Bytes] = []
        let body = try CommandBody(command: .status, expiresAt: UInt32(Fixtures.wallStart) + 5)
        for _ in 2...5 { records.append(try rig.sealed(body)) }
        let gap = try only(rig.toCar(records[3]).findings)
        XCTAssertEqual(gap.rule, .counterSequence)
        XCTAssertNil(gap.fault, "the car accepts gaps")
        XCTAssertTrue(gap.isDeviation)
        XCTAssertEqual(gap.detail, "Command counter 5 where 2 was next, counters 2 to 4 skipped: the car allows gaps, "
                       + "the phone rules number Commands 1, 2, 3")
        let older = try only(rig.toCar(records[1]).findings)
        XCTAssertEqual(older.rule, .counter)
        XCTAssertEqual(older.fault, .outOfOrderCounter)
        XCTAssertEqual(older.detail, "Command counter 3 is below the last accepted counter 5")
        XCTAssertEqual(rig.report.deviations, 3)
    }

    func testAnUndecryptableRecordDoesNotSpendItsCounter() throws {
        var rig = ObservedRig()
        try rig.handshake()
        var record = try rig.rig.phone.command(.status, now: rig.rig.now)
        record[record.count - 1] ^= 0x01
        let finding = try only(rig.toCar(record).findings)
        XCTAssertEqual(finding.rule, .decryption)
        XCTAssertEqual(finding.fault, .decryptionFailed)
        // The next counter (2) follows the last accepted one (0) with a gap: 1 never arrived.
        let body = try CommandBody(command: .status, expiresAt: UInt32(Fixtures.wallStart) + 5)
        let next = try only(rig.toCar(try rig.sealed(body)).findings)
        XCTAssertEqual(next.rule, .counterSequence)
    }

    func testPipelinedCommandIsRuleS6AndAnExpiredOneS9() throws {
        var rig = ObservedRig()
        try rig.handshake()
        let unlock = try rig.rig.phone.command(.unlock, now: rig.rig.now)
        let request = try XCTUnwrap(rig.toCar(unlock).actions.performs.first)
        let second = try rig.sealed(try CommandBody(command: .lock, expiresAt: UInt32(Fixtures.wallStart) + 5))
        let busy = try only(rig.toCar(second).findings)
        XCTAssertEqual(busy.rule, .oneCommand)
        XCTAssertEqual(busy.fault, .busy)
        _ = rig.rig.car.complete(request.token, result: nil, vehicleState: [], now: rig.rig.now)
        let late = try rig.sealed(try CommandBody(command: .status, expiresAt: UInt32(Fixtures.wallStart) - 1))
        let expired = try only(rig.toCar(late).findings)
        XCTAssertEqual(expired.rule, .expiry)
        XCTAssertEqual(expired.fault, .expiredCommand)
        let far = try rig.sealed(try CommandBody(command: .status, expiresAt: UInt32(Fixtures.wallStart) + 31))
        XCTAssertEqual(try only(rig.toCar(far).findings).fault, .lifetimeTooLong)
    }

    func testHelloStormIsRulesH6AndH1a() throws {
        var rig = ObservedRig()
        var findings: [ConformanceFinding] = []
        for _ in 0..<8 { findings += rig.toCar(try rig.rig.phone.start()).findings }
        let repeated = findings.filter { $0.rule == .oneHello }
        XCTAssertEqual(repeated.count, 7, "every Hello after the first meets an outstanding Challenge")
        XCTAssertTrue(repeated.allSatisfy { $0.fault == nil && $0.isDeviation })
        let rate = findings.filter { $0.rule == .helloRate }
        XCTAssertEqual(rate.count, 4, "a burst of 4, then none refilled within the same millisecond")
        XCTAssertTrue(rate.allSatisfy { $0.fault == .busy }, "the car's own per-peer budget agrees: \(rate.map(\.line))")
        XCTAssertEqual(rate.first?.detail, "Hellos of this key faster than the handshake budget (2 a second after a burst of 4)")
        XCTAssertEqual(findings.count, 11)
        // Half a second later one token is back: the next Hello is within the budget, but still
        // repeats one while a Challenge is outstanding.
        rig.rig.advance(seconds: 0.5)
        let next = rig.toCar(try rig.rig.phone.start()).findings
        XCTAssertEqual(next.map(\.rule), [.oneHello])
    }

    func testTheRetryBudgetFollowsTheKeyAcrossLinks() throws {
        var rig = ObservedRig()
        var findings: [ConformanceFinding] = []
        // Each Hello on a new link: the car's budget is per link here (no radio address), so
        // it answers every one; the observer still sees one key retrying too fast.
        for index in 0..<6 {
            let link = LinkID(UInt64(100 + index))
            rig.observer.linkOpened(link, transport: "unix", now: rig.rig.now)
            let hello = try rig.rig.phone.start()
            let actions = rig.rig.toCar(hello, link: link)
            XCTAssertEqual(actions.sent.first?.first, MessageType.challenge.rawValue)
            findings += rig.observer.message(hello, on: link, now: rig.rig.now, answer: actions)
        }
        XCTAssertEqual(findings.map(\.rule), [.helloRate, .helloRate])
        XCTAssertTrue(findings.allSatisfy { $0.fault == nil }, "the car allowed it")
        XCTAssertTrue(findings[0].line.hasSuffix("[the car allowed it]"), findings[0].line)
    }

    func testStaleTimestampSaysWhenItWasBigEndian() throws {
        var rig = ObservedRig()
        let challengeBytes = try rig.hello()
        let challenge = try ChallengeMessage.decode(challengeBytes)
        // The right time written big-endian: read little-endian it is years off.
        let swapped = UInt32(Fixtures.wallStart).byteSwapped
        let signed = AuthResponseMessage.signedData(challenge: challenge.challenge, timestamp: swapped)
        let signature = try Fixtures.phoneKey.signature(for: signed).rawRepresentation
        let auth = try AuthResponseMessage(challenge: challenge.challenge, timestamp: swapped, signature: signature).encoded()
        let finding = try only(rig.toCar(auth).findings)
        XCTAssertEqual(finding.rule, .timestamp)
        XCTAssertEqual(finding.fault, .staleTimestamp)
        XCTAssertTrue(finding.detail.hasSuffix("; read big-endian it would be right: the timestamp is little-endian"), finding.detail)
    }

    func testBadSignatureNamesItsEncoding() throws {
        var rig = ObservedRig()
        let challenge = try rig.hello()
        guard case .send(var auth) = try rig.rig.phone.receive(challenge, now: rig.rig.now) else { return XCTFail() }
        auth[auth.count - 1] ^= 0x01
        let finding = try only(rig.toCar(auth).findings)
        XCTAssertEqual(finding.rule, .signature)
        XCTAssertTrue(finding.detail.hasSuffix("-byte DER signature"), finding.detail)
    }

    func testUnknownKeyIsARefusalNotADeviation() throws {
        var rig = ObservedRig(record: KeyRecord(publicKey: Fixtures.otherPhoneKey.publicKey, role: .owner, permissions: .all))
        let finding = try only(rig.toCar(try rig.rig.phone.start()).findings)
        XCTAssertEqual(finding.rule, .key)
        XCTAssertEqual(finding.fault, .unknownKey)
        XCTAssertFalse(finding.isDeviation)
        XCTAssertTrue(finding.line.hasPrefix("link#7 refusal H2 (protocol.md 11 H2) +0 ms: key "), finding.line)
        XCTAssertTrue(rig.report.isClean)
        XCTAssertEqual(rig.report.refusals, 1)
        XCTAssertEqual(rig.report.checks.first { $0.rule == .key }?.status, "refused")
    }

    func testLinkEndsAddTransportFindings() throws {
        var rig = ObservedRig()
        _ = try rig.hello()
        rig.rig.advance(seconds: 3)
        let (findings, report) = try XCTUnwrap(rig.observer.linkEnded(rig.link, .handshakeDeadline(millis: 3000), now: rig.rig.now))
        let deadline = try only(findings)
        XCTAssertEqual(deadline.rule, .handshakeDeadline)
        XCTAssertEqual(deadline.detail, "no session 3000 ms after connecting; hello +0 ms, challenge +0 ms, 0 command(s)")
        XCTAssertFalse(report.isClean)
        XCTAssertEqual(rig.observer.reports.first?.link, rig.link, "kept among the recent reports")

        var ble = ConformanceObserver(configuration: rig.rig.car.configuration, handshakeDeadlineMillis: nil)
        ble.linkOpened(LinkID(9), transport: "ble", now: rig.rig.now)
        let framing = try only(try XCTUnwrap(ble.linkEnded(LinkID(9), .framing("fragment 5 continues no message"), now: rig.rig.now)).findings)
        XCTAssertEqual(framing.rule, .framing)
        XCTAssertEqual(framing.detail, "fragment 5 continues no message: a fragment that does not fit the sequence ends the link "
                       + "(Bluetooth LE transport)")
        XCTAssertNil(ble.linkEnded(LinkID(9), .phoneClosed, now: rig.rig.now), "once")
    }

    func testFindingsAndReportsAreBounded() throws {
        var rig = ObservedRig()
        var returned = 0
        for _ in 0..<(ConformanceObserver.findingsPerLink + 10) { returned += rig.toCar([0x7E]).findings.count }
        XCTAssertEqual(returned, ConformanceObserver.findingsPerLink, "what is not kept is not handed out (nor logged)")
        XCTAssertTrue(rig.report.summaryLine(nowMillis: 0).contains("(10 not itemised)"))
        XCTAssertEqual(rig.report.findings.count, ConformanceObserver.findingsPerLink)
        XCTAssertEqual(rig.report.omittedFindings, 10)
        // Five malformed messages, then the rate limiter's refusals (the car's, not the phone's).
        XCTAssertEqual(rig.report.deviations, 5)
        XCTAssertEqual(rig.report.refusals, ConformanceObserver.findingsPerLink + 5)
        XCTAssertEqual(rig.report.findings.last?.rule, .rateLimit)
        var observer = ConformanceObserver(configuration: rig.rig.car.configuration, handshakeDeadlineMillis: nil)
        for index in 0..<20 {
            observer.linkOpened(LinkID(UInt64(index)), transport: "unix", now: rig.rig.now)
            _ = observer.linkEnded(LinkID(UInt64(index)), .phoneClosed, now: rig.rig.now)
        }
        XCTAssertEqual(observer.reports.map(\.link.rawValue), Array((12..<20).reversed()))
    }

    /// Every fault the car can send maps to a rule, and every rule has a title and a reference
    /// (docs/phone-app.md lists them; PhoneAppDocumentTests checks that list).
    func testEveryFaultHasARule() {
        let observer = ConformanceObserver(configuration: CarProtocolConfiguration(vehicleID: Fixtures.vehicleID), handshakeDeadlineMillis: nil)
        for fault in FaultCode.allCases {
            let rule = observer.failingRule(fault, sent: .carMessage("x"), phase: .idle)
            XCTAssertFalse(rule.title.isEmpty, "\(fault)")
        }
        XCTAssertEqual(Set(ConformanceRule.allCases.map(\.id)).count, ConformanceRule.allCases.count)
        XCTAssertTrue(ConformanceRule.allCases.allSatisfy { $0.reference.hasPrefix("protocol.md ") })
    }
}
