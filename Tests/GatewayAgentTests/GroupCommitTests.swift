// Group commit on the agent's real loop, in process: a round of concurrent handshakes is one
// transaction; no reply reaches a phone and no line moves before the record deciding it is
// committed; a failed commit is counted and the car keeps serving.
import XCTest
import Drivers
import Protocol
@testable import carkey_agent

final class GroupCommitTests: XCTestCase {
    private func ownerRecord(_ key: P256PrivateKey) -> KeyRecord {
        KeyRecord(publicKey: key.publicKey, role: .owner, permissions: .all)
    }

    /// Hello, Challenge, AuthResponse, SessionAccepted for each phone (rounds run as needed).
    private func establish(_ phones: [TestPhone], on car: InProcessCar) throws {
        for phone in phones { try phone.sendHello() }
        try car.pump("every Challenge") { try phones.allSatisfy { try $0.hasMessage() } }
        for phone in phones { _ = try phone.take() }
        try car.pump("every SessionAccepted") { try phones.allSatisfy { try $0.hasMessage() } }
        for phone in phones {
            guard case .established = try phone.take() else { return XCTFail("no session") }
        }
    }

    private func response(_ phone: TestPhone, on car: InProcessCar) throws -> ResponseBody {
        try car.pump("a Response") { try phone.hasMessage() }
        guard case .response(let body) = try phone.take() else { throw PhoneError.notEstablished }
        return body
    }

    func testARoundOfConcurrentHandshakesIsOneCommit() throws {
        let owners = try (0..<8).map { _ in try P256PrivateKey.generate() }
        let car = try InProcessCar(keys: owners.map(ownerRecord))
        let phones = try owners.map { try car.phone($0) }
        for phone in phones { try phone.sendHello() }
        try car.pump("every Challenge") { try phones.allSatisfy { try $0.hasMessage() } }
        // Answering the Challenge sends the AuthResponse: all eight are in the car's sockets
        // before its next round, which therefore decides all eight.
        for phone in phones { guard case .send = try phone.take() else { return XCTFail("no Challenge") } }
        let before = car.service.auditStats
        try car.round(maxWaitMillis: 2000)
        let after = car.service.auditStats
        XCTAssertEqual(after.commits - before.commits, 1, "one transaction for the round")
        XCTAssertEqual(after.rows - before.rows, 8)
        XCTAssertEqual(car.writer.committed.last?.map(\.result), Array(repeating: "established", count: 8))
        try car.pump("every SessionAccepted") { try phones.allSatisfy { try $0.hasMessage() } }
        for phone in phones { guard case .established = try phone.take() else { return XCTFail("no session") } }
        XCTAssertEqual(after.largestBatch, 8)
        XCTAssertEqual(after.rowsPerCommit, 8)
    }

    func testARowThatGatesNothingRidesWithTheNextCommitOrGoesOutWhenIdle() throws {
        let first = try P256PrivateKey.generate(), second = try P256PrivateKey.generate()
        let car = try InProcessCar(keys: [ownerRecord(first), ownerRecord(second)])
        let a = try car.phone(first), b = try car.phone(second)
        try establish([a], on: car)
        try b.sendHello()
        try car.pump("a Challenge") { try b.hasMessage() }
        _ = try b.take() // the AuthResponse is now in the car's socket...
        a.close()        // ...and so is the first phone's hang-up
        let commits = car.writer.committed.count
        try car.pump("both read") { car.writer.committed.count > commits }
        XCTAssertEqual(car.writer.committed.last?.map(\.result).sorted(), ["closed", "established"], "one commit for both")
        try car.pump("the SessionAccepted") { try b.hasMessage() }

        // Alone: the round that reads the hang-up has no effect to release, so it does not
        // commit; the next poll finds nothing to do, and the row is committed then.
        b.close()
        let before = car.writer.committed.count
        try car.pump("the hang-up read") { car.service.hasHeldWork }
        XCTAssertEqual(car.writer.committed.count, before)
        try car.round()
        XCTAssertEqual(car.writer.committed.count, before + 1)
        XCTAssertEqual(car.writer.committed.last?.map(\.result), ["closed"])
        XCTAssertFalse(car.service.hasHeldWork)
    }

    func testNoReplyLeavesAndNoLineMovesBeforeTheRecordIsCommitted() throws {
        let owner = try P256PrivateKey.generate()
        let car = try InProcessCar(keys: [ownerRecord(owner)])
        let phone = try car.phone(owner)
        // At every commit: what the batch says, whether the phone already had an answer, and
        // how often the unlock line had moved.
        var atCommit: [(results: [String], answered: Bool, unlockMoves: Int)] = []
        car.writer.beforeCommit = { events in
            atCommit.append((events.map(\.result), try phone.hasMessage(), car.moves("unlock")))
        }
        var atStart: [(command: CommandCode, rows: [String], unlockMoves: Int)] = []
        car.actuator.onStart = { request in
            let rows = (try? car.rows(of: owner).map { "\($0.event.action) \($0.event.result)" }) ?? []
            atStart.append((request.command, rows, car.moves("unlock")))
        }

        try establish([phone], on: car)
        XCTAssertEqual(atCommit.map(\.results), [["established"]])
        try phone.sendCommand(.unlock)
        let unlock = try response(phone, on: car)
        XCTAssertTrue(unlock.isOK, "\(unlock)")
        XCTAssertEqual(car.moves("unlock"), 2, "one pulse: active, then inactive")
        try phone.sendCommand(.status)
        XCTAssertTrue(try response(phone, on: car).isOK)

        XCTAssertEqual(atCommit.map(\.results), [["established"], ["accepted"], ["ok"], ["ok"]])
        XCTAssertEqual(atCommit.map(\.answered), [false, false, false, false], "a reply never precedes its record's commit")
        XCTAssertEqual(atCommit.map(\.unlockMoves), [0, 0, 2, 2], "the line moves only after the decision is durable")
        // The actuator was asked only once the decision row was in the store.
        XCTAssertEqual(atStart.map(\.command), [.unlock, .status])
        XCTAssertEqual(atStart.first?.rows, ["session established", "unlock accepted"])
        XCTAssertEqual(atStart.first?.unlockMoves, 0)
    }

    func testAFailedCommitIsCountedAndTheCarKeepsServing() throws {
        let owner = try P256PrivateKey.generate()
        let car = try InProcessCar(keys: [ownerRecord(owner)])
        let phone = try car.phone(owner)
        struct DiskFailure: Error {}
        car.writer.beforeCommit = { _ in throw DiskFailure() }
        try establish([phone], on: car)
        XCTAssertEqual(car.service.auditStats.failedCommits, 1)
        XCTAssertEqual(car.service.auditStats.rowsLost, 1)
        XCTAssertEqual(try car.rows(of: owner), [], "nothing written")

        car.writer.beforeCommit = nil
        try phone.sendCommand(.status)
        XCTAssertTrue(try response(phone, on: car).isOK, "the owner is still served")
        XCTAssertEqual(try car.rows(of: owner).map(\.event.result), ["ok"])
        XCTAssertEqual(car.service.auditStats.commits, 1)
    }

    func testWhatTheCarStartsItselfIsCommittedBeforeTheCallerAnswers() throws {
        // The control socket shows the pairing code as soon as withEngine returns: the row
        // saying the window opened is on disk by then.
        let car = try InProcessCar(keys: [ownerRecord(try P256PrivateKey.generate())])
        let opened = car.service.withEngine { engine, now in
            let outcome = car.keys.openPairingWindow(engine: &engine, now: now)
            return (outcome.result, outcome.actions)
        }
        guard case .success = opened else { return XCTFail("window not opened: \(opened)") }
        XCTAssertEqual(try car.store.events(since: 0, limit: 10).map { "\($0.event.action) \($0.event.result)" }, ["pairing opened"])
        XCTAssertFalse(car.service.hasHeldWork)
    }

    func testAKeychainWriteCommitsThePendingRowsFirst() throws {
        // Sequence numbers follow the order of events: a revocation (written synchronously
        // with its event) must not overtake a row still waiting in the round's batch.
        let owner = try P256PrivateKey.generate(), other = try P256PrivateKey.generate()
        let car = try InProcessCar(keys: [ownerRecord(owner), ownerRecord(other)])
        try establish([try car.phone(owner), try car.phone(other)], on: car)
        let links = car.service.withEngine { engine, _ in (engine.establishedLinks, []) }
        // The second phone's link drops: its sessionClosed row waits for the round's commit...
        car.service.handle(.closed(try XCTUnwrap(links.last), .peerClosed))
        XCTAssertTrue(car.service.hasHeldWork)
        // ...when, in the same round, the console or the cloud applies a revocation.
        let revocation = try Revocation.issue(by: owner, vehicleID: car.vehicle, target: .key(KeyID(publicKey: other.publicKey)),
                                              issuedAt: 1_800_000_000).encoded()
        let fault = car.service.withEngine { engine, now in
            let outcome = car.keys.applyRevocation(revocation, source: "cloud", engine: &engine, now: now)
            return (outcome.fault, outcome.actions)
        }
        XCTAssertNil(fault)
        // A vehicle event written synchronously (a door, an actuator fault) waits its turn too.
        car.service.handle(.closed(try XCTUnwrap(links.first), .peerClosed))
        car.body.events.service(.serviceOff, result: "ok")
        car.service.finishRound()
        let rows = try car.store.events(since: 0, limit: 100).map { "\($0.event.kind.rawValue) \($0.event.result)" }
        XCTAssertEqual(rows, ["access-decision established", "access-decision established", "access-decision closed",
                              "revocation revoked", "access-decision closed", "service ok"])
    }
}
