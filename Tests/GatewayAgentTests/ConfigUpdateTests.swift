// OTA configuration in process, on real files and a real store: rollback and freeze
// protection, schema errors naming the key, forbidden keys, live apply, health-check rollback,
// and a power cut at every step of an apply.
import XCTest
import Drivers
import Protocol
import TestHarness
@testable import carkey_agent

/// The remote-commands engineer's directory stands behind this protocol; here a fixed table.
struct FakeSigners: RemoteSignerDirectory {
    var signers: [RemoteSigner]
    func remoteSigner(_ keyID: KeyID) -> RemoteSigner? { signers.first { $0.keyID == keyID } }
}

final class ConfigUpdateTests: XCTestCase {
    static let fleet = try! P256PrivateKey(rawScalar: Bytes(repeating: 0x21, count: 32))
    static let guest = try! P256PrivateKey(rawScalar: Bytes(repeating: 0x22, count: 32))
    static let now: Int64 = 1_800_000_000
    let vehicle = try! VehicleID("VIN-OTA-1")
    var folder = ""
    var store: CarStore!
    var configPath: String { folder + "/agent.json" }
    let original = """
        {"vehicleID": "VIN-OTA-1", "stateDirectory": "state", "logLevel": "info",
         "service": {"pin": "482913"},
         "mqtt": {"url": "mqtt://127.0.0.1:1883", "keepaliveSeconds": 30},
         "proximity": {"walkAwaySeconds": 10}}
        """

    override func setUpWithError() throws {
        folder = AgentTestSupport.temporaryDirectory()
        store = try CarStore.open(stateDirectory: folder + "/state")
        try Files.writeAtomically(Array(original.utf8), to: configPath)
        LogLevel.threshold = .info
    }

    override func tearDown() {
        LogLevel.threshold = .info
        store = nil
        AgentTestSupport.removeTree(folder)
    }

    static var signers: FakeSigners {
        FakeSigners(signers: [
            RemoteSigner(keyID: KeyID(publicKey: fleet.publicKey), publicKey: fleet.publicKey, kind: .fleet, permissions: []),
            RemoteSigner(keyID: KeyID(publicKey: guest.publicKey), publicKey: guest.publicKey, kind: .share, permissions: .all),
        ])
    }

    func updater(live: LiveSettings = LiveSettings(), health: [ConfigHealthCheck] = [], now: Int64 = ConfigUpdateTests.now) -> ConfigUpdater {
        ConfigUpdater(configPath: configPath, vehicleID: vehicle, signers: Self.signers, store: store,
                      topics: CloudTopics(vehicleID: vehicle.string), now: { EventTime(seconds: now, trusted: true) },
                      live: live, healthChecks: health, log: AgentLog(prefix: "test"))
    }

    func document(_ json: String, version: UInt64, by key: P256PrivateKey = fleet, issuedAt: Int64 = now - 10,
                  lifetime: UInt32 = 3600) throws -> Bytes {
        try SignedConfig.issue(by: key, vehicleID: vehicle, version: version, issuedAt: UInt32(issuedAt),
                               expiresAt: UInt32(issuedAt) + lifetime, payload: Array(json.utf8)).encoded()
    }

    func currentFile() throws -> String { String(decoding: try Files.read(configPath), as: UTF8.self) }

    func lastReport() throws -> [String: JSONTree] {
        let messages = try SQLiteOutbox(store: store).pending(afterID: 0, limit: 100)
            .filter { $0.topic == "vehicles/VIN-OTA-1/config/reported" }
        XCTAssertEqual(messages.count, 1, "one retained report, newer ones replace older")
        XCTAssertTrue(messages.last?.retain ?? false)
        guard case .success(.object(let fields)) = JSONTree.decode(try XCTUnwrap(messages.last).payload) else {
            XCTFail("report is not a JSON object"); return [:]
        }
        return fields
    }

    func configEvents() throws -> [StoredEvent] { try store.events().filter { $0.event.kind.rawValue == "config" } }

    func testValidDocumentAppliesLiveAndReportsWhatWaitsForARestart() throws {
        var walkAway: Int?
        let live = LiveSettings([LiveSettingHandler(keys: ["proximity"]) { walkAway = $0.proximity.walkAwaySeconds }])
        let outcome = updater(live: live).handle(document: try document(
            #"{"logLevel": "debug", "proximity": {"walkAwaySeconds": 25}, "link": {"maxLinks": 2}}"#, version: 1), requestID: nil)
        XCTAssertEqual(outcome.result, .applied, "\(outcome)")
        XCTAssertEqual(LogLevel.threshold, .debug, "log level changed without a restart")
        XCTAssertEqual(walkAway, 25, "walk-away timer changed without a restart")
        XCTAssertEqual(outcome.atNextStart, ["link.maxLinks", "mqtt.keepaliveSeconds"], "keepalive left the managed set: back to its default")
        let config = try AgentConfig.load(path: configPath)
        XCTAssertEqual(config.proximity.walkAwaySeconds, 25)
        XCTAssertEqual(config.servicePIN, try AgentConfig.parse(Array(original.utf8), baseDirectory: folder).servicePIN, "the PIN is carried over")
        XCTAssertEqual(config.vehicleID, vehicle)
        XCTAssertFalse(FileManagerless.exists(configPath + ".pending"))
        let report = try lastReport()
        XCTAssertEqual(report["result"], .string("applied"))
        XCTAssertEqual(report["version"], .integer(1))
        XCTAssertEqual(report["inForce"], .integer(1))
        XCTAssertEqual(report["live"], .array([.string("logLevel"), .string("proximity.walkAwaySeconds")]))
        XCTAssertEqual(report["atNextStart"], .array([.string("link.maxLinks"), .string("mqtt.keepaliveSeconds")]))
        XCTAssertEqual(try configEvents().map(\.event.result), ["applied"])
    }

    func testOlderOrEqualVersionIsRefusedAsRollback() throws {
        let updater = updater()
        XCTAssertEqual(updater.handle(document: try document(#"{"logLevel": "warn"}"#, version: 5), requestID: nil).result, .applied)
        let applied = try currentFile()
        for version: UInt64 in [5, 4] {
            let outcome = updater.handle(document: try document(#"{"logLevel": "error"}"#, version: version), requestID: nil)
            XCTAssertEqual(outcome.result, .refused)
            XCTAssertEqual(outcome.reason, "versionNotNewer")
            XCTAssertEqual(outcome.inForce, 5)
        }
        XCTAssertEqual(try currentFile(), applied)
        XCTAssertEqual(try lastReport()["reason"], .string("versionNotNewer"))
        // The version survives a restart: a new updater on the same store still refuses.
        store = nil
        store = try CarStore.open(stateDirectory: folder + "/state")
        XCTAssertEqual(self.updater().handle(document: try document(#"{"logLevel": "error"}"#, version: 3), requestID: nil).reason, "versionNotNewer")
    }

    func testRetainedRedeliveryOfTheSameDocumentIsIgnored() throws {
        let bytes = try document(#"{"logLevel": "warn"}"#, version: 2)
        XCTAssertEqual(updater().handle(document: bytes, requestID: nil).result, .applied)
        XCTAssertEqual(updater().handle(document: bytes, requestID: nil).result, .ignored)
        XCTAssertEqual(try configEvents().count, 1)
        XCTAssertEqual(try lastReport()["result"], .string("applied"), "the report is not overwritten by a re-delivery")
    }

    func testExpiredNotYetValidAndUntrustedClockAreRefused() throws {
        let expired = updater().handle(document: try document(#"{"logLevel": "warn"}"#, version: 1, issuedAt: Self.now - 7200), requestID: nil)
        XCTAssertEqual(expired.reason, "expired")
        let future = updater().handle(document: try document(#"{"logLevel": "warn"}"#, version: 1, issuedAt: Self.now + 3600), requestID: nil)
        XCTAssertEqual(future.reason, "notYetValid")
        let untrusted = ConfigUpdater(configPath: configPath, vehicleID: vehicle, signers: Self.signers, store: store, topics: nil,
                                      now: { EventTime(seconds: Self.now, trusted: false) }, log: AgentLog())
        XCTAssertEqual(untrusted.handle(document: try document(#"{"logLevel": "warn"}"#, version: 1), requestID: nil).reason, "clockNotTrusted")
        XCTAssertEqual(try currentFile(), original)
        XCTAssertEqual(try lastReport()["result"], .string("refused"))
    }

    func testShareSignedAndWrongVehicleAreRefused() throws {
        XCTAssertEqual(updater().handle(document: try document(#"{"logLevel": "warn"}"#, version: 1, by: Self.guest), requestID: nil).reason,
                       "insufficientPermission")
        let other = try SignedConfig.issue(by: Self.fleet, vehicleID: try VehicleID("VIN-OTHER"), version: 1, issuedAt: UInt32(Self.now),
                                           expiresAt: UInt32(Self.now + 60), payload: Array(#"{"logLevel":"warn"}"#.utf8)).encoded()
        XCTAssertEqual(updater().handle(document: other, requestID: nil).reason, "wrongVehicle")
        XCTAssertEqual(try currentFile(), original)
    }

    func testSchemaInvalidDocumentIsRefusedAndTheErrorNamesTheKey() throws {
        let outcome = updater().handle(document: try document(#"{"proximity": {"walkAwaySeconds": 99999}}"#, version: 1), requestID: nil)
        XCTAssertEqual(outcome.result, .refused)
        XCTAssertEqual(outcome.reason, "schemaInvalid")
        XCTAssertEqual(outcome.key, "proximity.walkAwaySeconds")
        let typo = updater().handle(document: try document(#"{"logLevl": "debug"}"#, version: 2), requestID: nil)
        XCTAssertEqual(typo.key, "logLevl")
        XCTAssertEqual(try currentFile(), original)
        XCTAssertEqual(try lastReport()["key"], .string("logLevl"))
    }

    /// docs/cloud.md's table of the fault reported for each refusal reason.
    func testTheDocumentedFaultOfEachReason() throws {
        let doc = try String(contentsOfFile: #filePath.components(separatedBy: "/Tests/")[0] + "/docs/cloud.md", encoding: .utf8)
        let start = try XCTUnwrap(doc.range(of: "| `reason` | `fault` |"), "docs/cloud.md has no table of configuration faults")
        var documented: [String: String] = [:]
        for line in doc[start.upperBound...].split(separator: "\n").dropFirst().prefix(while: { $0.hasPrefix("|") }) {
            let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            let reasons = cells[0].split(separator: "`", omittingEmptySubsequences: false).enumerated().filter { $0.offset % 2 == 1 }.map { String($0.element) }
            for reason in reasons { documented[reason] = cells[1] }
        }
        let verification: [SignedConfigError] = [.malformed(.empty), .malformed(.unsupportedVersion(2)), .wrongVehicle, .unknownSigner,
                                                 .insufficientPermission, .badSignature, .clockNotTrusted, .notYetValid, .expired,
                                                 .lifetimeTooLong, .notNewer(version: 1, current: 1)]
        for error in verification {
            XCTAssertEqual(documented[error.name], "\(error.fault.rawValue) `\(error.fault.name)`", error.name)
        }
        XCTAssertEqual(documented["internalError"], "27 `internalError`")

        // Content refusals carry no protocol fault: null in the report, a null code in the event.
        let forbidden = updater().handle(document: try document(#"{"vehicleID": "VIN-OTA-1"}"#, version: 1), requestID: nil)
        XCTAssertEqual(forbidden.reason, "forbiddenKey")
        XCTAssertEqual(try lastReport()["fault"], .null)
        let schema = updater().handle(document: try document(#"{"logLevl": "debug"}"#, version: 2), requestID: nil)
        XCTAssertEqual(schema.reason, "schemaInvalid")
        XCTAssertEqual(try lastReport()["fault"], .null)
        for reason in ["forbiddenKey", "schemaInvalid", "localConfigUnreadable", "writeFailed", "healthCheckFailed", "liveApplyFailed", "interrupted"] {
            XCTAssertTrue(documented[reason]?.hasPrefix("none") == true, "\(reason): \(documented[reason] ?? "missing")")
        }
        let faults = try configEvents().map(\.event.fault)
        XCTAssertEqual(faults, [EventFault(code: nil, name: "forbiddenKey"), EventFault(code: nil, name: "schemaInvalid")])
    }

    func testForbiddenKeyRefusesTheWholeDocument() throws {
        for (version, json, key) in [(UInt64(1), #"{"logLevel": "debug", "vehicleID": "VIN-OTA-1"}"#, "vehicleID"),
                                     (2, #"{"logLevel": "debug", "service": {"pin": "111111"}}"#, "service.pin"),
                                     (3, #"{"mqtt": {"url": "mqtt://evil:1883"}}"#, "mqtt.url"),
                                     (4, #"{"stateDirectory": "/tmp/x"}"#, "stateDirectory"),
                                     (5, #"{"store": {"maxEvents": 10}}"#, "store.maxEvents"),
                                     (6, #"{"remote": {"allowUnlock": true, "fleetKeys": []}}"#, "remote.fleetKeys"),
                                     (7, #"{"remote": {"refuseDuringServiceMode": false}}"#, "remote.refuseDuringServiceMode")] {
            let outcome = updater().handle(document: try document(json, version: version), requestID: nil)
            XCTAssertEqual(outcome.result, .refused, json)
            XCTAssertEqual(outcome.reason, "forbiddenKey", json)
            XCTAssertEqual(outcome.key, key, json)
        }
        XCTAssertEqual(LogLevel.threshold, .info, "nothing of a refused document applies, not even its allowed keys")
        XCTAssertEqual(try currentFile(), original)
    }

    func testRemoteCommandPolicyAppliesLive() throws {
        var allowUnlock: Bool?
        let live = LiveSettings([LiveSettingHandler(keys: ["remote"]) { allowUnlock = $0.remote.allowUnlock }])
        let outcome = updater(live: live).handle(document: try document(
            #"{"remote": {"allowUnlock": true, "autoRelockSeconds": 30}}"#, version: 1), requestID: nil)
        XCTAssertEqual(outcome.result, .applied, "\(outcome)")
        XCTAssertEqual(allowUnlock, true)
        XCTAssertEqual(outcome.live, ["logLevel", "remote.allowUnlock", "remote.autoRelockSeconds"], "logLevel left the file (same effective level)")
    }

    func testFailedHealthCheckRollsBackToLastGoodAndReportsIt() throws {
        var walkAway = 10
        let live = LiveSettings([LiveSettingHandler(keys: ["proximity"]) { walkAway = $0.proximity.walkAwaySeconds }])
        var ran = false
        let health = [ConfigHealthCheck(name: "cloud link") { ran = true; return "not reconnected within 20 s" }]
        let outcome = updater(live: live, health: health).handle(document: try document(
            #"{"logLevel": "debug", "proximity": {"walkAwaySeconds": 40}}"#, version: 7), requestID: nil)
        XCTAssertTrue(ran)
        XCTAssertEqual(outcome.result, .rolledBack)
        XCTAssertEqual(outcome.reason, "healthCheckFailed")
        XCTAssertEqual(outcome.inForce, 0)
        XCTAssertEqual(try currentFile(), original, "last-good is back byte for byte")
        XCTAssertEqual(walkAway, 10, "the live setting went back too")
        XCTAssertEqual(LogLevel.threshold, .info)
        XCTAssertFalse(FileManagerless.exists(configPath + ".pending"))
        let report = try lastReport()
        XCTAssertEqual(report["result"], .string("rolled-back"))
        XCTAssertEqual(report["version"], .integer(7))
        XCTAssertEqual(report["reason"], .string("healthCheckFailed"))
        XCTAssertEqual(try configEvents().last?.event.result, "rolled-back")
        // The failed version is used up: the same version is not tried again.
        XCTAssertEqual(updater().handle(document: try document(#"{"logLevel": "warn"}"#, version: 7), requestID: nil).reason, "versionNotNewer")
    }

    /// A power cut after each step of an apply: after the start-up recovery the file parses and
    /// is byte for byte the old one or the new one.
    func testPowerCutAtEveryStepLeavesOldOrNewConfig() throws {
        let bytes = try document(#"{"logLevel": "debug"}"#, version: 1)
        // The new file, as a completed apply writes it.
        XCTAssertEqual(updater().handle(document: bytes, requestID: nil).result, .applied)
        let new = try currentFile()
        for step in ConfigFileSet.Step.allCases where step != .finished {
            try Files.writeAtomically(Array(original.utf8), to: configPath)
            store = nil
            AgentTestSupport.removeTree(folder + "/state")
            store = try CarStore.open(stateDirectory: folder + "/state")
            let crashing = updater()
            crashing.stopAfter = step
            _ = crashing.handle(document: bytes, requestID: nil)
            // Next start: recovery runs before the config is read.
            let recovered = try ConfigRecovery.recoverIfInterrupted(configPath: configPath)
            let text = try currentFile()
            XCTAssertTrue(text == original || text == new, "step \(step): torn config")
            XCTAssertNoThrow(try AgentConfig.load(path: configPath))
            XCTAssertEqual(text, original, "step \(step): an unfinished apply is undone")
            XCTAssertFalse(FileManagerless.exists(configPath + ".pending"))
            if step != .savedLastGood { XCTAssertEqual(recovered, ConfigRecovery.Outcome(version: 1)) }
            if let recovered { updater().reportRecovery(recovered) ; XCTAssertEqual(try lastReport()["reason"], .string("interrupted")) }
        }
    }
}

/// access(2) without Foundation.
enum FileManagerless {
    static func exists(_ path: String) -> Bool { (try? Files.mode(of: path)) != nil }
}
