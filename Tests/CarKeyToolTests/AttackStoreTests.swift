// Attacks on the car's store (issue 14): a backup that restores an empty car, a car that
// forgets it was paired, an event log taken away. Every test drives the real carkey-agent and
// carkey executables on real SQLite files, and reports one AttackReport line per attack.
//
//   store.cold-copy-after-stop   a clean stop (SIGTERM, SIGINT) leaves carkey.db whole: the
//                                WAL is empty and a copy of carkey.db alone is the same car
//   store.backup-restore         backups taken during sessions restore a wiped car whose owner
//                                then unlocks; restore refuses while the agent runs
//   store.restore-wrong-file     restore refuses garbage, foreign, damaged, identity-less and
//                                other cars' stores, and leaves the car's store untouched
//   store.lost-identity          a truncated carkey.db, a garbage WAL, a deleted or altered
//                                identity row: the agent refuses to start (never a new car)
//   store.events-dropped         events table dropped at rest: repaired at start with an event
//   store.events-dropped-running dropped while the agent runs: no unlock without its record,
//                                the agent reports it and puts the table back
//   store.events-replaced-running replaced by a view (cannot be repaired): every unlock refused
import XCTest
import Drivers
import Protocol
import TestHarness
#if canImport(Glibc)
import Glibc
#endif

final class AttackStoreTests: XCTestCase {
    // MARK: Item 1: the clean stop

    func testACleanStopLeavesTheWholeCarInCarkeyDB() throws {
        let car = AgentHarness()
        try car.start()
        let owner = try car.enrollOwner()
        let commands = 2 * AttackReport.scale
        for index in 0..<commands {
            XCTAssertEqual(try car.phone(index % 2 == 0 ? "unlock" : "lock", key: owner.path).firstLine, "ok")
        }
        XCTAssertEqual(car.stop(), 0, "SIGTERM is a clean stop")
        let walAfterTerm = Self.size(car.stateDir + "/carkey.db-wal") ?? 0
        XCTAssertEqual(walAfterTerm, 0, "after a clean stop the WAL holds nothing: carkey.db alone is the store")
        // Counted after the stop: the last rows (a session closed, summaries) are written by it.
        let written = try car.events().count
        XCTAssertGreaterThan(written, commands)

        // The cold copy the old procedure described: carkey.db (and the key) only.
        let cold = AgentHarness(stateDirectory: car.folder + "/cold")
        XCTAssertEqual(mkdir(cold.stateDir, 0o700), 0)
        try Self.copy(car.stateDir + "/carkey.db", to: cold.stateDir + "/carkey.db")
        try Self.copy(car.stateDir + "/storage.key", to: cold.stateDir + "/storage.key")
        let copied = try Database(path: cold.stateDir + "/carkey.db", create: false)
        XCTAssertEqual(try copied.read { try $0.scalar("SELECT COUNT(*) FROM events") }, .integer(Int64(written)))
        XCTAssertEqual(try copied.read { try $0.scalar("SELECT COUNT(*) FROM sealed_records WHERE kind = 'identity'") }, .integer(2))

        try cold.start()
        var ownerSuccesses = 0
        for _ in 0..<commands where try cold.phone("status", key: owner.path).firstLine == "ok" { ownerSuccesses += 1 }
        XCTAssertEqual(ownerSuccesses, commands, "the copy is the same car: the owner's pinned identity and key work")
        XCTAssertEqual(try String(contentsOfFile: cold.stateDir + "/car-identity.pub"),
                       try String(contentsOfFile: car.stateDir + "/car-identity.pub"))
        // SIGINT (Ctrl-C in a terminal) is the same clean stop.
        XCTAssertEqual(cold.agent?.stop(signal: SIGINT), 0)
        let walAfterInt = Self.size(cold.stateDir + "/carkey.db-wal") ?? 0
        XCTAssertEqual(walAfterInt, 0)

        AttackReport.emit(AttackResult(attack: "store.cold-copy-after-stop", tries: 2, ownerAttempts: commands,
                                       ownerSuccesses: ownerSuccesses, unauthorised: 0, crashes: 0,
                                       note: "WAL after SIGTERM \(walAfterTerm) B, after SIGINT \(walAfterInt) B; carkey.db \(Self.size(car.stateDir + "/carkey.db") ?? 0) B"))
    }

    // MARK: Item 2: backup while running, restore into a wiped car

    func testABackupTakenDuringSessionsRestoresAWipedCar() throws {
        let car = AgentHarness()
        try car.start()
        let owner = try car.enrollOwner()
        let prober = try LoadEnrollment.enrollOwner(try P256PrivateKey.generate(), stateDirectory: car.stateDir)
        let probe = OwnerProbe(phone: prober, socketPath: car.socketPath, intervalMillis: 100, deadlineMillis: 2000)
        probe.start()
        let backups = 3 * AttackReport.scale
        var written = 0
        var lastBackup = ""
        for index in 0..<backups {
            XCTAssertEqual(try car.phone(index % 2 == 0 ? "unlock" : "lock", key: owner.path).firstLine, "ok")
            let file = car.folder + "/backup-\(index).db"
            let result = try car.agentTool(["backup", "--state-dir", car.stateDir, "--out", file])
            XCTAssertEqual(result.status, 0, result.stderr)
            if result.status == 0 { written += 1; lastBackup = file }
            XCTAssertEqual(try Files.mode(of: file), 0o600, "a backup holds personal data: 0600")
            try Self.assertWholeStore(file)
        }
        let during = probe.stop()
        XCTAssertFalse(lastBackup.isEmpty)
        let eventsAtBackup = try Self.eventCount(lastBackup)

        // Restore refuses while the agent runs (it would swap the file under it).
        let busy = try car.agentTool(["restore", "--state-dir", car.stateDir, "--from", lastBackup])
        XCTAssertNotEqual(busy.status, 0)
        XCTAssertTrue(busy.stderr.contains("agent is running"), busy.stderr)

        XCTAssertEqual(car.stop(), 0)
        for suffix in ["", "-wal", "-shm"] { unlink(car.stateDir + "/carkey.db" + suffix) }
        let restored = try car.agentTool(["restore", "--state-dir", car.stateDir, "--from", lastBackup])
        XCTAssertEqual(restored.status, 0, restored.stderr)
        XCTAssertTrue(restored.stdout.contains("2 phone key(s)"), restored.stdout)

        try car.start()
        let unlock = try car.phone("unlock", key: owner.path)
        XCTAssertEqual(unlock.firstLine, "ok", unlock.stdout + unlock.stderr)
        let events = try car.events()
        XCTAssertGreaterThan(events.count, eventsAtBackup, "the restored log goes on from the backup")
        XCTAssertTrue(events.contains { $0.event.action == "unlock" && $0.event.result == "ok" && $0.seq > Int64(eventsAtBackup) })

        AttackReport.emit(AttackResult(attack: "store.backup-restore", tries: written + 2,
                                       ownerAttempts: during.attempts + 1,
                                       ownerSuccesses: during.successes + (unlock.firstLine == "ok" ? 1 : 0),
                                       unauthorised: 0, crashes: 0,
                                       note: "\(written) backups during \(during.attempts) owner sessions (\(during.summary())); restore while running refused; owner unlocks after wipe+restore"))
    }

    // MARK: Item 2: restore refuses what is not this car's store

    func testRestoreRefusesAnythingButThisCarsStore() throws {
        let other = AgentHarness()
        try other.start()
        _ = try other.enrollOwner()
        let otherBackup = other.folder + "/other.db"
        XCTAssertEqual(try other.agentTool(["backup", "--state-dir", other.stateDir, "--out", otherBackup]).status, 0)
        XCTAssertEqual(other.stop(), 0)

        let car = AgentHarness()
        try car.start()
        let owner = try car.enrollOwner()
        let good = car.folder + "/good.db"
        XCTAssertEqual(try car.agentTool(["backup", "--state-dir", car.stateDir, "--out", good]).status, 0)
        XCTAssertEqual(car.stop(), 0)
        let storeBefore = try Self.bytes(car.stateDir + "/carkey.db")

        var bad: [(name: String, path: String, expect: String)] = [("another car's store", otherBackup, "storage key")]
        let garbage = car.folder + "/garbage.db"
        try Self.write(Array((0..<65536).map { UInt8(truncatingIfNeeded: $0 &* 7919 &+ 13) }), to: garbage)
        bad.append(("garbage", garbage, "not"))
        let foreign = car.folder + "/foreign.db"
        try Connection(path: foreign, create: true).execute("CREATE TABLE notes (text TEXT); INSERT INTO notes VALUES ('hello')")
        bad.append(("another application's SQLite file", foreign, "not an OpenCarKey store"))
        let truncated = car.folder + "/truncated.db"
        let goodBytes = try Self.bytes(good)
        try Self.write(Array(goodBytes.prefix(goodBytes.count / 2)), to: truncated)
        bad.append(("a truncated backup", truncated, "is not"))
        let noIdentity = car.folder + "/no-identity.db"
        try Self.write(goodBytes, to: noIdentity)
        try Connection(path: noIdentity, create: false).execute("DELETE FROM sealed_records WHERE kind = 'identity' AND id = X'636172'")
        bad.append(("a store without its identity", noIdentity, "no car identity"))
        let newer = car.folder + "/newer.db"
        try Self.write(goodBytes, to: newer)
        try Connection(path: newer, create: false).execute("PRAGMA user_version = 999")
        bad.append(("a store from a newer agent", newer, "newer"))

        var accepted = 0
        for file in bad {
            let result = try car.agentTool(["restore", "--state-dir", car.stateDir, "--from", file.path])
            XCTAssertNotEqual(result.status, 0, "\(file.name) restored")
            if result.status == 0 { accepted += 1 }
            XCTAssertTrue(result.stderr.contains(file.expect), "\(file.name): \(result.stderr)")
            XCTAssertEqual(try Self.bytes(car.stateDir + "/carkey.db"), storeBefore, "\(file.name): the store was touched")
            XCTAssertNil(Self.size(car.stateDir + "/carkey.db.before-restore"))
            XCTAssertNil(Self.size(car.stateDir + "/carkey.db.restoring"), "no staging file left behind")
        }
        // Without the storage key nothing sealed can be checked: say how to restore both.
        let key = try Self.bytes(car.stateDir + "/storage.key")
        unlink(car.stateDir + "/storage.key")
        let keyless = try car.agentTool(["restore", "--state-dir", car.stateDir, "--from", good])
        XCTAssertNotEqual(keyless.status, 0)
        XCTAssertTrue(keyless.stderr.contains("storage.key is missing") && keyless.stderr.contains("together"), keyless.stderr)
        try Self.write(key, to: car.stateDir + "/storage.key")

        // The right file still restores, and the car is the same car.
        let restored = try car.agentTool(["restore", "--state-dir", car.stateDir, "--from", good])
        XCTAssertEqual(restored.status, 0, restored.stderr)
        XCTAssertEqual(try Self.bytes(car.stateDir + "/carkey.db.before-restore"), storeBefore, "the previous store is kept aside")
        try car.start()
        XCTAssertEqual(try car.phone("unlock", key: owner.path).firstLine, "ok")

        AttackReport.emit(AttackResult(attack: "store.restore-wrong-file", tries: bad.count + 1, unauthorised: accepted, crashes: 0,
                                       note: "refused: " + bad.map(\.name).joined(separator: ", ") + ", a missing storage key"))
    }

    // MARK: Item 3: a car that forgets it was paired

    func testALostIdentityStopsTheStartInsteadOfMintingANewCar() throws {
        let car = AgentHarness()
        try car.start()
        let owner = try car.enrollOwner()
        let backup = car.folder + "/backup.db"
        XCTAssertEqual(try car.agentTool(["backup", "--state-dir", car.stateDir, "--out", backup]).status, 0)
        let identity = try String(contentsOfFile: car.stateDir + "/car-identity.pub")

        // First, the car as a power cut leaves it when it never stopped cleanly: no checkpoint
        // yet, so carkey.db holds little more than its header and every commit (the identity
        // among them) is in the WAL. Then a stopped car's store damaged in three ways.
        let attacks: [(name: String, damage: () throws -> Void)] = [
            ("garbage WAL after a power cut", {
                XCTAssertEqual(car.agent?.stop(signal: SIGKILL), 128 + SIGKILL)
                let wal = car.stateDir + "/carkey.db-wal"
                let walBytes = Int(Self.size(wal) ?? 0)
                XCTAssertGreaterThan(walBytes, 0, "the killed agent left its commits in the WAL")
                try Self.write(Array((0..<max(walBytes, 4096)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 5) }), to: wal)
            }),
            ("carkey.db truncated to 0 bytes", {
                XCTAssertEqual(car.stop(), 0)
                XCTAssertEqual(truncate(car.stateDir + "/carkey.db", 0), 0)
            }),
            ("identity row deleted", {
                XCTAssertEqual(car.stop(), 0)
                try Connection(path: car.stateDir + "/carkey.db", create: false)
                    .execute("DELETE FROM sealed_records WHERE kind = 'identity' AND id = X'636172'")
            }),
            ("identity row altered", {
                XCTAssertEqual(car.stop(), 0)
                try Connection(path: car.stateDir + "/carkey.db", create: false)
                    .execute("UPDATE sealed_records SET sealed = zeroblob(length(sealed) - 1) || X'01' WHERE kind = 'identity' AND id = X'636172'")
            }),
            ("storage key and store both deleted", {
                XCTAssertEqual(car.stop(), 0)
                for file in ["storage.key", "carkey.db", "carkey.db-wal", "carkey.db-shm"] { unlink(car.stateDir + "/" + file) }
            }),
        ]
        let storageKey = try Self.bytes(car.stateDir + "/storage.key")
        var newCars = 0
        var refused = 0
        var recovered = 0
        for attack in attacks {
            try attack.damage()
            car.stop()  // forget the process the damage stopped
            let start = try Self.startExpectingRefusal(car.stateDir)
            if start.refused { refused += 1 } else { newCars += 1 }
            XCTAssertTrue(start.refused, "\(attack.name): the agent started: \(start.output)")
            XCTAssertTrue(start.output.contains("Refusing to start") && start.output.contains("carkey-agent restore"),
                          "\(attack.name): \(start.output)")
            XCTAssertEqual(try String(contentsOfFile: car.stateDir + "/car-identity.pub"), identity,
                           "\(attack.name): the published identity changed")
            // The way back the message gives: the car's storage key in place (kept apart from
            // the backups), then its backup restored.
            try Self.write(storageKey, to: car.stateDir + "/storage.key")
            let restore = try car.agentTool(["restore", "--state-dir", car.stateDir, "--from", backup])
            XCTAssertEqual(restore.status, 0, "\(attack.name): \(restore.stderr)")
            try car.start()
            if try car.phone("unlock", key: owner.path).firstLine == "ok" { recovered += 1 }
        }
        XCTAssertEqual(recovered, attacks.count)

        AttackReport.emit(AttackResult(attack: "store.lost-identity", tries: attacks.count, ownerAttempts: attacks.count,
                                       ownerSuccesses: recovered, unauthorised: newCars, crashes: 0,
                                       note: "\(refused)/\(attacks.count) starts refused with recovery advice (" + attacks.map(\.name).joined(separator: ", ")
                                           + "); owner unlocks after each restore"))
    }

    // MARK: Item 4: the event log taken away

    func testAnEventsTableDroppedAtRestIsRepairedAtStartWithAnEvent() throws {
        let car = AgentHarness()
        try car.start()
        let owner = try car.enrollOwner()
        XCTAssertEqual(car.stop(), 0)
        let database = try Database(path: car.stateDir + "/carkey.db", create: false)
        try database.transaction { try $0.execute("DROP TABLE events") }

        let process = try car.start()
        XCTAssertTrue(process.stderr.contains("storeRepaired"), process.stderr)
        let unlock = try car.phone("unlock", key: owner.path)
        XCTAssertEqual(unlock.firstLine, "ok", unlock.stdout + unlock.stderr)
        let events = try car.events()
        XCTAssertTrue(events.contains { $0.event.kind == .storage && $0.event.result == "storeRepaired" }, "the repair is itself an event")
        try car.waitForEvent { $0.event.action == "unlock" && $0.event.result == "ok" }
        let unrecorded = events.contains { $0.event.action == "unlock" && $0.event.result == "accepted" } ? 0 : 1

        AttackReport.emit(AttackResult(attack: "store.events-dropped", tries: 1, ownerAttempts: 1,
                                       ownerSuccesses: unlock.firstLine == "ok" ? 1 : 0, unauthorised: unrecorded, crashes: 0,
                                       note: "events table recreated at start, storeRepaired event written, unlock recorded"))
    }

    func testAnEventsTableDroppedWhileRunningNeverOpensADoorUnrecorded() throws {
        let car = AgentHarness()
        try car.start()
        let owner = try car.enrollOwner()
        let database = try Database(path: car.stateDir + "/carkey.db", create: false)
        try database.transaction { try $0.execute("DROP TABLE events") }

        let attempts = 3 * AttackReport.scale
        var opened = 0
        for _ in 0..<attempts where try car.phone("unlock", key: owner.path).firstLine == "ok" { opened += 1 }
        let stderr = car.agent?.stderr ?? ""
        XCTAssertTrue(stderr.contains("could not be written to the event log"), "the agent reports the failed write: \(stderr)")
        XCTAssertTrue(stderr.contains("storeRepaired"), stderr)
        let events = try car.events()
        XCTAssertTrue(events.contains { $0.event.result == "storeRepaired" })
        // Every unlock the phone saw succeed is in the (recreated) log, accepted and completed.
        let recorded = events.filter { $0.event.action == "unlock" && $0.event.result == "accepted" }.count
        XCTAssertEqual(recorded, opened, "an unlock without its record")
        XCTAssertGreaterThan(opened, 0, "once the table is back the owner unlocks again")
        XCTAssertTrue(car.agent?.isRunning ?? false)

        AttackReport.emit(AttackResult(attack: "store.events-dropped-running", tries: 1, ownerAttempts: attempts, ownerSuccesses: opened,
                                       unauthorised: max(0, opened - recorded), crashes: car.agent?.isRunning == true ? 0 : 1,
                                       note: "failed audit commit logged, table recreated at run time (storeRepaired); \(recorded) recorded unlocks for \(opened) opened"))
    }

    func testAnEventsTableReplacedWhileRunningRefusesEveryUnlock() throws {
        let car = AgentHarness()
        try car.start()
        let owner = try car.enrollOwner()
        // A view in its place: inserts fail and the table cannot be recreated under that name.
        let database = try Database(path: car.stateDir + "/carkey.db", create: false)
        try database.transaction { try $0.execute("DROP TABLE events; CREATE VIEW events AS SELECT 1 AS seq") }

        let attempts = 2 * AttackReport.scale
        var opened = 0
        var refusedInternal = 0
        for _ in 0..<attempts {
            let result = try car.phone("unlock", key: owner.path)
            if result.firstLine == "ok" { opened += 1 }
            if (result.stdout + result.stderr).contains("internalError") { refusedInternal += 1 }
        }
        XCTAssertEqual(opened, 0, "an unlock went through without its audit record")
        XCTAssertEqual(refusedInternal, attempts)
        let stderr = car.agent?.stderr ?? ""
        XCTAssertTrue(stderr.contains("refused: its audit record could not be written"), stderr)
        XCTAssertTrue(car.agent?.isRunning ?? false)

        // Restarted, the agent refuses to serve on a store it cannot repair.
        XCTAssertEqual(car.stop(), 0)
        let start = try Self.startExpectingRefusal(car.stateDir)
        XCTAssertTrue(start.refused, start.output)

        AttackReport.emit(AttackResult(attack: "store.events-replaced-running", tries: 1, ownerAttempts: attempts, ownerSuccesses: 0,
                                       unauthorised: opened, crashes: 0,
                                       note: "\(refusedInternal)/\(attempts) unlocks refused (internalError) while the log cannot be written; restart refused"))
    }

    // MARK: Helpers

    /// Runs the agent on `stateDir` and waits (20 s at most) for it to exit by itself.
    private static func startExpectingRefusal(_ stateDir: String) throws -> (refused: Bool, output: String) {
        let process = try BackgroundProcess("carkey-agent", ["run", "--simulate", "--state-dir", stateDir, "--clock-sync", "no"])
        let exited = process.wait(timeoutSeconds: 20) { !process.isRunning }
        let status = process.stop()
        return (exited && status != 0, process.stdout + process.stderr)
    }

    /// A backup is one self-contained file: no WAL beside it, intact, identity inside.
    private static func assertWholeStore(_ path: String, file: StaticString = #filePath, line: UInt = #line) throws {
        XCTAssertNil(size(path + "-wal"), "a backup needs no -wal", file: file, line: line)
        // A plain connection: the file stays in the rollback-journal mode the tool wrote.
        let connection = try Connection(path: path, create: false)
        XCTAssertEqual(try connection.scalar("PRAGMA journal_mode"), .text("delete"), file: file, line: line)
        XCTAssertEqual(try connection.scalar("PRAGMA integrity_check"), .text("ok"), file: file, line: line)
        XCTAssertEqual(try connection.scalar("SELECT COUNT(*) FROM sealed_records WHERE kind = 'identity' AND id = X'636172'"),
                       .integer(1), file: file, line: line)
    }

    private static func eventCount(_ path: String) throws -> Int {
        guard case .integer(let count)? = try Connection(path: path, create: false).scalar("SELECT MAX(seq) FROM events") else { return 0 }
        return Int(count)
    }

    static func size(_ path: String) -> Int64? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return Int64(info.st_size)
    }

    static func bytes(_ path: String) throws -> [UInt8] { try Files.read(path, limit: 1 << 28) }

    static func write(_ bytes: [UInt8], to path: String) throws {
        try Files.writeAtomically(bytes, to: path, mode: 0o600)
    }

    static func copy(_ source: String, to target: String) throws { try write(try bytes(source), to: target) }
}
