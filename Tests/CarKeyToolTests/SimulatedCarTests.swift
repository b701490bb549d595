// End to end: `carkey-agent run --simulate` and `carkey phone` over the Unix socket, through the
// real binaries; the owner is enrolled by pairing (AgentHarness); the audit trail is read back
// from the agent's store.
import XCTest
import Drivers
import Protocol
#if canImport(Glibc)
import Glibc
#endif

final class SimulatedCarTests: XCTestCase {
    private var car: AgentHarness!
    private var agent: BackgroundProcess?
    private var ownerPublicHex = ""
    private var ownerKeyFile = ""

    private var folder: String { car.folder }
    private var stateDir: String { car.stateDir }
    private var socketPath: String { car.socketPath }

    override func setUpWithError() throws {
        car = AgentHarness()
        agent = try car.start()
        (ownerKeyFile, ownerPublicHex) = try car.enrollOwner()
    }

    override func tearDown() {
        car = nil
        agent = nil
    }

    private func phone(_ command: String, key: String? = nil, vehicle: String = "OCK-SIM-0001",
                       extra: [String] = []) throws -> ProcessResult {
        try Subprocess.run("carkey", ["phone", "--key", key ?? ownerKeyFile, "--connect", "unix:" + socketPath,
                                      "--car-key", "@" + stateDir + "/car-identity.pub", "--vehicle", vehicle] + extra + [command])
    }

    private func keyIDHex(_ publicHex: String) throws -> String { try car.keyIDHex(publicHex) }

    func testAgentPublishesItsIdentityAndVehicleID() throws {
        XCTAssertTrue(agent!.stderr.contains("carkey-agent: simulated car OCK-SIM-0001 listening on \(socketPath)"), agent!.stderr)
        XCTAssertTrue(agent!.stderr.contains("clock not trusted"), agent!.stderr)
        XCTAssertEqual(try Files.mode(of: socketPath), 0o600)
        XCTAssertEqual(try Files.mode(of: stateDir), 0o700)
        XCTAssertEqual(try Files.mode(of: stateDir + "/car-identity.pub"), 0o644)
        let pem = String(decoding: try Files.read(stateDir + "/car-identity.pub"), as: UTF8.self)
        XCTAssertNoThrow(try P256PublicKey(pemRepresentation: pem))
        XCTAssertEqual(try Files.read(stateDir + "/vehicle-id"), Bytes("OCK-SIM-0001\n".utf8))
    }

    func testOwnerUnlocksAndReadsStatus() throws {
        let unlock = try phone("unlock")
        XCTAssertEqual(unlock.status, 0, unlock.stdout + unlock.stderr)
        let lines = unlock.stdout.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.first, "ok")
        XCTAssertTrue(lines.contains("vehicle state: unlocked, trunk locked"), unlock.stdout)
        // The car's time in the same form as the events (ISO 8601, UTC).
        let carTime = try XCTUnwrap(lines.first { $0.hasPrefix("car time: ") }, unlock.stdout)
        XCTAssertNotNil(carTime.range(of: #"^car time: \d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z \(car clock not trusted\)$"#,
                                      options: .regularExpression), carTime)
        XCTAssertTrue(lines.contains("key: owner, permissions unlock,lock,trunk,remote,manage"), unlock.stdout)
        XCTAssertTrue(lines.contains { $0.hasPrefix("handshake ms: ") } && lines.contains { $0.hasPrefix("command ms: ") })

        let status = try phone("status", extra: ["--encoding", "raw"])
        XCTAssertEqual(status.status, 0, status.stdout + status.stderr)
        XCTAssertTrue(status.stdout.hasPrefix("ok\n"))
        XCTAssertTrue(status.stdout.contains("vehicle state: unlocked, trunk locked"), "status does not actuate")
        XCTAssertTrue(agent!.stderr.contains("unlock pulsed"), agent!.stderr)
    }

    func testUnknownKeyIsRefusedByName() throws {
        let other = folder + "/other.pem"
        XCTAssertEqual(try Subprocess.run("carkey", ["keygen", "--out", other]).status, 0)
        let result = try phone("unlock", key: other)
        XCTAssertEqual(result.status, 1)
        XCTAssertEqual(result.stdout, "fault: unknownKey (1)\n")
        XCTAssertTrue(result.stderr.contains("not enrolled"), result.stderr)
    }

    func testWrongVehicleIsRefusedByThePhoneBeforeSigning() throws {
        let result = try phone("unlock", vehicle: "OCK-SIM-0002")
        XCTAssertEqual(result.status, 1)
        XCTAssertEqual(result.stdout, "fault: wrongVehicle (14)\n")
        XCTAssertTrue(result.stderr.contains("before signing"), result.stderr)
        // The car saw a Hello and nothing else: no AuthResponse, so no audit record at all.
        XCTAssertEqual(agent!.stop(), 0)
        XCTAssertEqual(try CarStore.open(stateDirectory: stateDir).events().filter { $0.event.kind == .accessDecision }, [])
    }

    func testAuditTrailIsInTheStoreAndTheAgentStopsCleanly() throws {
        XCTAssertEqual(try phone("unlock").status, 0)
        let other = folder + "/other.pem"
        let otherPublic = try Subprocess.run("carkey", ["keygen", "--out", other]).stdout.filter { !$0.isWhitespace }
        XCTAssertEqual(try phone("lock", key: other).status, 1)

        XCTAssertEqual(agent!.stop(signal: SIGTERM), 0, "SIGTERM is a clean stop")
        XCTAssertNil(UnixSocket.inode(of: socketPath), "the socket is removed")
        XCTAssertTrue(agent!.stderr.contains("stopping on signal \(SIGTERM)"), agent!.stderr)

        let events = try CarStore.open(stateDirectory: stateDir).events().filter { $0.event.kind == .accessDecision }
        let owner = try keyIDHex(ownerPublicHex)
        let summary = events.map { [$0.event.actor ?? "-", $0.event.action, $0.event.result, $0.event.fault?.name ?? "-"] }
        XCTAssertEqual(summary, [
            [owner, "session", "established", "-"],
            [owner, "unlock", "accepted", "-"],
            [owner, "unlock", "ok", "-"],
            [owner, "session", "closed", "-"],
            [try keyIDHex(otherPublic), "message", "refused", "unknownKey"],
        ])
        XCTAssertEqual(events.last?.event.fault?.code, 1)
        XCTAssertTrue(events.allSatisfy { !$0.event.time.trusted }, "no trusted-time mark yet")
        // Only IDs, names and results: no key, signature or message bytes in any field.
        for event in events {
            XCTAssertEqual(event.event.detailJSON?.hasPrefix(#"{"event":""#), true)
            let text = [event.event.actor, event.event.action, event.event.result, event.event.detailJSON].compactMap { $0 }.joined()
            XCTAssertFalse(text.contains(ownerPublicHex) || text.count > 100, text)
        }
        XCTAssertFalse(agent!.stderr.contains(ownerPublicHex), "the full public key is not logged either")
    }

    func testMalformedFrameClosesOnlyThatLink() throws {
        let bad = try UnixSocket.connect(path: socketPath)
        defer { bad.close() }
        _ = try bad.sendSome([0x04, 0x01, 0x00][...]) // announces 1025 bytes
        try bad.setSocketTimeouts(milliseconds: 5000)
        XCTAssertEqual(try bad.receive(upTo: 16), .closed)
        XCTAssertEqual(try phone("unlock").status, 0, "the car still serves other links")
        XCTAssertTrue(agent!.stderr.contains("malformed frame: frame of 1025 bytes exceeds 1024"), agent!.stderr)
    }

    func testStrangersFailuresNeitherLockOutTheOwnerNorKeepTheirLink() throws {
        // Issue 14: there is no car-wide pre-session limit (one attacker could lock everyone
        // out with it). A fresh connection per attempt is a fresh link, and the owner gets in.
        let stranger = try P256PrivateKey.generate(), second = try P256PrivateKey.generate()
        func hello(_ key: P256PrivateKey) throws -> Bytes {
            try HelloMessage(keyID: KeyID(publicKey: key.publicKey),
                             ephemeralPublicKey: try P256PrivateKey.generate().publicKey.sec1).encoded()
        }
        var faults: [FaultCode?] = []
        for _ in 0..<21 {
            let link = try SimulatedLinkClient(socketPath: socketPath, timeoutMillis: 5000)
            try link.send(try hello(stranger))
            faults.append(try FaultMessage.decode(try link.receive()).fault)
        }
        XCTAssertEqual(faults, Array(repeating: .unknownKey, count: 21))
        XCTAssertEqual(try phone("unlock").status, 0, "failures on other links do not refuse the owner")

        // On one link, the failure that blocks it (the fifth) also closes it. (Another key:
        // the audit log keeps at most 24 rows a minute per key, then a summary.)
        let link = try SimulatedLinkClient(socketPath: socketPath, timeoutMillis: 5000)
        for _ in 0..<5 {
            try link.send(try hello(second))
            XCTAssertEqual(try FaultMessage.decode(try link.receive()).fault, .unknownKey)
        }
        XCTAssertThrowsError(try link.receive()) { XCTAssertEqual($0 as? SimulatedLinkError, .closedByPeer) }

        XCTAssertEqual(agent!.stop(), 0)
        let refusals = try CarStore.open(stateDirectory: stateDir).events().filter { $0.event.result == "refused" }
        XCTAssertEqual(refusals.filter { $0.event.fault?.name == "unknownKey" }.count, 26)
    }
}

/// `carkey decode` and `carkey-agent run` argument checks: no agent needed.
final class ToolDiagnosticsTests: XCTestCase {
    /// The Hello of docs/protocol.md's known-answer example.
    let hello = "010180cfa36924866af504505099611376290b90eadf185311a0fbe95b8770bc"
        + "08575f6761cb436002024d60c9f160401fd5833cb5a9d8e387e9056be2b80677"
        + "2d3500b928769e771cb6be0000"

    func testDecodeHello() throws {
        let result = try Subprocess.run("carkey", ["decode", hello])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertTrue(result.stdout.hasPrefix("Hello (phone -> car), 77 bytes, version 1\n"), result.stdout)
        XCTAssertTrue(result.stdout.contains("keyID:              80cfa36924866af5"))
        XCTAssertTrue(result.stdout.contains("shareCertificate:   none"))
        let spaced = try Subprocess.run("carkey", ["decode", "7f01", "00 11"])
        XCTAssertEqual(spaced.status, 0)
        XCTAssertTrue(spaced.stdout.contains("17 rateLimited"), spaced.stdout)
    }

    /// A version 1 PairingHello (an app before SPAKE2+) is well formed, so decode exits 0, and
    /// it says that the car refuses it with pairingVersion (the --help says why 0).
    func testDecodeOfAnOldAppsPairingHelloNamesTheCarsRefusal() throws {
        let old = "2001" + "04" + String(repeating: "ab", count: 64)
        let result = try Subprocess.run("carkey", ["decode", old])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertTrue(result.stdout.hasPrefix("PairingHello (phone -> car), 67 bytes, version 1 (pre-SPAKE2+ pairing)\n"), result.stdout)
        XCTAssertTrue(result.stdout.contains("\n  refused by the car: Fault 35 pairingVersion: The car pairs with SPAKE2+"), result.stdout)
        let help = try Subprocess.run("carkey", ["decode", "--help"])
        XCTAssertTrue(help.stdout.contains("refused by the car"), help.stdout)
    }

    func testDecodeGarbageNamesTheFailingField() throws {
        let truncated = try Subprocess.run("carkey", ["decode", String(hello.prefix(30))])
        XCTAssertEqual(truncated.status, 1)
        XCTAssertEqual(truncated.stdout, "")
        XCTAssertTrue(truncated.stderr.contains("truncated at phoneEphemeralPub"), truncated.stderr)
        let unknownType = try Subprocess.run("carkey", ["decode", "ff00"])
        XCTAssertEqual(unknownType.status, 1)
        XCTAssertTrue(unknownType.stderr.contains("unknown message type 0xff"), unknownType.stderr)
        let notHex = try Subprocess.run("carkey", ["decode", "01x"])
        XCTAssertEqual(notHex.status, 2)
        XCTAssertEqual(notHex.stderr.filter { $0 == "\n" }.count, 1)
    }

    func testRunRefusesBadArguments() throws {
        let folder = Subprocess.makeTemporaryDirectory()
        defer { Subprocess.removeTree(folder) }
        let cases: [([String], String)] = [
            (["--state-dir", folder], "--simulate"),
            (["--simulate"], "--state-dir"),
            (["--simulate", "--state-dir", folder, "--vehicle-id", String(repeating: "V", count: 33)], "--vehicle"),
            (["--simulate", "--state-dir", folder, "--simulate-owner", "04abcd"], "--simulate-owner"),
            (["--simulate", "--state-dir", folder, "--key-slots", "0"], "--key-slots"),
            (["--simulate", "--state-dir", folder, "--pairing-window-seconds", "601"], "--pairing-window-seconds"),
            (["--simulate", "--state-dir", folder, "--clock-sync", "maybe"], "--clock-sync"),
        ]
        for (arguments, option) in cases {
            let result = try Subprocess.run("carkey-agent", ["run"] + arguments)
            XCTAssertEqual(result.status, 2, "\(arguments)")
            XCTAssertTrue(result.stderr.contains(option), result.stderr)
        }
    }

    /// `carkey phone`'s transport options: exactly one way to the car, BLE options only with
    /// --ble, and the bluetoothd-free machine here has no Bluetooth at all (a clear error).
    func testPhoneTransportOptions() throws {
        let folder = Subprocess.makeTemporaryDirectory()
        defer { Subprocess.removeTree(folder) }
        let key = folder + "/phone.pem"
        XCTAssertEqual(try Subprocess.run("carkey", ["keygen", "--out", key]).status, 0)
        let cases: [([String], String)] = [
            ([], "--connect unix:PATH or --ble ADAPTER"),
            (["--connect", "tcp:1"], "--connect"),
            (["--connect", "unix:/x", "--ble", "hci1", "--scan"], "exclude each other"),
            (["--ble", "bluetooth", "--scan"], "--ble"),
            (["--ble", "hci1"], "exactly one of --car ADDRESS and --scan"),
            (["--ble", "hci1", "--scan", "--car", "00:AA:01:00:00:00"], "exactly one of"),
            (["--ble", "hci1", "--car", "00:AA:01:00:00"], "--car"),
            (["--connect", "unix:/x", "--scan"], "'--scan' goes with --ble"),
            (["--connect", "unix:/x", "--car", "00:AA:01:00:00:00"], "'--car' goes with --ble"),
            (["--ble", "1", "--scan", "--scan-timeout", "0"], "--scan-timeout"),
        ]
        for (arguments, expected) in cases {
            let result = try Subprocess.run("carkey", ["phone", "--key", key] + arguments + ["status"])
            XCTAssertEqual(result.status, 2, "\(arguments): \(result.stderr)")
            XCTAssertTrue(result.stderr.contains(expected), "\(arguments): \(result.stderr)")
        }
        // Well-formed, but without Bluetooth in the kernel: one line saying so, exit 1.
        let probe = socket(AF_BLUETOOTH, Int32(SOCK_RAW.rawValue), 1)
        guard probe < 0 else {
            close(probe)
            throw XCTSkip("this kernel has Bluetooth: the VM lane covers the real path")
        }
        let carKey = try Subprocess.run("carkey", ["keygen", "--out", folder + "/car.pem"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let noRadio = try Subprocess.run("carkey", ["phone", "--key", key, "--ble", "hci1", "--car", "00:AA:01:00:00:00",
                                                    "--car-key", carKey, "--vehicle", "V", "status"])
        XCTAssertEqual(noRadio.status, 1, noRadio.stderr)
        XCTAssertTrue(noRadio.stderr.contains("no Bluetooth support"), noRadio.stderr)
    }
}
