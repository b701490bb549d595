// Owner enrollment end to end: `carkey-agent pair` opens the running agent's pairing window over
// DIR/control.sock, `carkey phone enroll --code` proves the code; the key survives a restart.
import XCTest
import FoundationEssentials
import Drivers
import Protocol
#if canImport(Glibc)
import Glibc
#endif

final class PairingTests: XCTestCase {
    private var car: AgentHarness!

    override func setUp() { car = AgentHarness() }
    override func tearDown() { car = nil }

    /// A code that is certainly not `code`.
    private func wrong(_ code: String) -> String {
        let value = (Int(code)! + 1) % 1_000_000
        let text = String(value)
        return String(repeating: "0", count: 6 - text.count) + text
    }

    func testEnrolledOwnerUnlocksAcrossARestartAndTheSequenceContinues() throws {
        try car.start()
        let key = try car.keygen("owner")
        let code = try car.pair()
        let enrolled = try car.enroll(key.path, code: code, extra: ["--vehicle", AgentHarness.vehicle])
        XCTAssertEqual(enrolled.status, 0, enrolled.stdout + enrolled.stderr)
        let lines = enrolled.stdout.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.first, "enrolled")
        XCTAssertTrue(lines.contains("vehicle: \(AgentHarness.vehicle)"), enrolled.stdout)
        // The proven car is pinned beside the key, owner-only.
        let carFile = key.path + ".car"
        XCTAssertTrue(lines.contains("saved: \(carFile)"), enrolled.stdout)
        XCTAssertEqual(try Files.mode(of: carFile), 0o600)
        let pem = String(decoding: try Files.read(car.stateDir + "/car-identity.pub"), as: UTF8.self)
        let identity = try P256PublicKey(pemRepresentation: pem)
        // The car granted its advertising key (protocol.md 18.12); it is saved, never printed.
        XCTAssertTrue(lines.contains("advertising key: received"), enrolled.stdout)
        let carText = String(decoding: try Files.read(carFile), as: UTF8.self)
        let carLines = carText.split(separator: "\n").map(String.init)
        XCTAssertEqual(Array(carLines.prefix(2)), ["vehicle-id \(AgentHarness.vehicle)", "car-identity \(identity.sec1.hexString)"])
        XCTAssertEqual(carLines.count, 3, carText)
        let savedHex = try XCTUnwrap(carLines.last?.split(separator: " ").last.map(String.init))
        XCTAssertTrue(carLines.last?.hasPrefix("advertising-key ") ?? false, carText)
        let saved = try AdvertisingKey(bytes: try XCTUnwrap(Bytes(hex: savedHex)))
        XCTAssertFalse(enrolled.stdout.contains(savedHex) || enrolled.stderr.contains(savedHex), "the key is never printed")

        // No --car-key/--vehicle: the .car file pins them.
        let unlock = try car.phone("unlock", key: key.path)
        XCTAssertEqual(unlock.firstLine, "ok", unlock.stdout + unlock.stderr)
        XCTAssertTrue(unlock.stdout.contains("key: owner, permissions unlock,lock,trunk,remote,manage"), unlock.stdout)

        // The code is shown to whoever asked on the control socket, and nowhere else.
        let agent = try XCTUnwrap(car.agent)
        XCTAssertEqual(car.stop(), 0)
        XCTAssertFalse(agent.stdout.contains(code) || agent.stderr.contains(code), "the pairing code is never logged")
        XCTAssertFalse(agent.stdout.contains(savedHex) || agent.stderr.contains(savedHex), "nor the advertising key")
        // The phone's key is the car's: identifiers the car makes resolve with the saved key.
        let carKey = try AdvertisingKey(bytes: try XCTUnwrap(try CarStore.open(stateDirectory: car.stateDir)
            .get(kind: .identity, id: CarStore.advertisingKeyRecordID)))
        XCTAssertEqual(saved, carKey)
        let advertised = try AdvertisingIdentifierRotation(key: carKey, now: 0).current
        XCTAssertTrue(AdvertisingIdentifier.resolve(advertised.bytes, key: saved))
        XCTAssertFalse(AdvertisingIdentifier.resolve(advertised.bytes, key: try AdvertisingKey(bytes: Bytes(repeating: 7, count: 16))))
        let firstRun = try car.events()
        XCTAssertFalse(firstRun.contains { [$0.event.actor, $0.event.detailJSON].compactMap { $0 }.joined().contains(code) })
        let enrollment = try XCTUnwrap(firstRun.first { $0.event.kind == .enrollment && $0.event.result == "enrolled" })
        XCTAssertEqual(enrollment.event.actor, try car.keyIDHex(key.publicHex))
        XCTAssertEqual(enrollment.event.action, "enroll owner")
        let lastSeq = try XCTUnwrap(firstRun.last?.seq)

        // Restart: the key comes back from the sealed store.
        let restarted = try car.start()
        XCTAssertTrue(restarted.stderr.contains("keychain 1 of 32 slots in use (1 owner, 0 shared)"), restarted.stderr)
        XCTAssertEqual(try car.phone("lock", key: key.path).firstLine, "ok")
        XCTAssertEqual(car.stop(), 0)
        let secondRun = try car.events(since: lastSeq)
        XCTAssertFalse(secondRun.isEmpty)
        XCTAssertEqual(secondRun.map(\.seq), Array((lastSeq + 1)...(lastSeq + Int64(secondRun.count))),
                       "numbers continue across the restart, no gap, no reuse")
        XCTAssertTrue(secondRun.contains { $0.event.action == "lock" && $0.event.result == "ok" })
        XCTAssertEqual(Set((firstRun + secondRun).map(\.uuid)).count, firstRun.count + secondRun.count)
    }

    func testAPairedCarFileWithoutTheAdvertisingKeyStillWorksAndABadKeyLineIsRefused() throws {
        try car.start()
        let key = try car.enrollOwner()
        let carFile = key.path + ".car"
        let lines = String(decoding: try Files.read(carFile), as: UTF8.self).split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.count, 3)
        // Written before the advertising key existed (or by a car that sent none): still pins the car.
        try Files.writeAtomically(Bytes((lines.prefix(2).joined(separator: "\n") + "\n").utf8), to: carFile, mode: 0o600)
        XCTAssertEqual(try car.phone("status", key: key.path).firstLine, "ok")
        // A key line that is not 16 bytes of hex is an error, and its value is not echoed.
        try Files.writeAtomically(Bytes((lines.prefix(2).joined(separator: "\n") + "\nadvertising-key 00ff\n").utf8),
                                  to: carFile, mode: 0o600)
        let bad = try car.phone("status", key: key.path)
        XCTAssertEqual(bad.status, 2, bad.stdout + bad.stderr)
        XCTAssertTrue(bad.stderr.contains("advertising-key line"), bad.stderr)
        XCTAssertFalse(bad.stderr.contains("00ff"), bad.stderr)
    }

    func testWrongCodesAreRefusedAndTheFifthClosesTheWindow() throws {
        try car.start()
        let key = try car.keygen("owner")
        let code = try car.pair()
        for attempt in 1...5 {
            let result = try car.enroll(key.path, code: wrong(code))
            XCTAssertEqual(result.status, 1, "attempt \(attempt)")
            XCTAssertEqual(result.stdout, "fault: wrongPairingCode (31)\n", "attempt \(attempt)")
            XCTAssertFalse(FileManagerless.exists(key.path + ".car"), "nothing pinned")
        }
        let late = try car.enroll(key.path, code: code)
        XCTAssertEqual(late.stdout, "fault: pairingClosed (30)\n", "five wrong codes closed the window")
        XCTAssertEqual(try car.phone("status", key: key.path, pinned: true).firstLine, "fault: unknownKey (1)")

        // A new window has a new code, and it works.
        XCTAssertEqual(try car.enroll(key.path, code: try car.pair()).firstLine, "enrolled")
        XCTAssertEqual(car.stop(), 0)
        let closes = try car.events().filter { $0.event.kind == .enrollment && $0.event.result == "closed" }
        XCTAssertTrue(closes.contains { $0.event.fault?.name == "wrongPairingCode" }, "\(closes)")
    }

    /// An app from before SPAKE2+ sends a version 1 PairingHello over the link: the agent
    /// answers the cleartext Fault pairingVersion ("update the app"), keeps running, and the
    /// window keeps its code and all five guesses: the updated app enrolls with the same code.
    func testAnOldAppsPairingHelloGetsThePairingVersionFaultAndChangesNothing() throws {
        try car.start()
        let key = try car.keygen("owner")
        let code = try car.pair()
        let oldApp = try P256PrivateKey.generate()
        for _ in 0..<3 {
            let link = try SimulatedLinkClient(socketPath: car.stateDir + "/ble.sock", timeoutMillis: 10_000)
            try link.send([MessageType.pairingHello.rawValue, 0x01] + oldApp.publicKey.sec1)
            guard case .fault(let fault) = try Message.decode(try link.receive()) else { return XCTFail("no fault") }
            XCTAssertEqual(fault.fault, .pairingVersion)
            XCTAssertTrue(fault.fault?.remediation.contains("Update the app") ?? false)
        }
        let status = try ControlSocket.exchange("status\n", path: car.controlPath)
        XCTAssertTrue(status.contains { $0.hasPrefix("pairing open expires-in ") }, "\(status)")
        XCTAssertTrue(status.contains { $0.contains("owners 0") }, "\(status)")
        XCTAssertEqual(try car.enroll(key.path, code: code).firstLine, "enrolled")
        XCTAssertEqual(car.stop(), 0)
        let refusals = try car.events().filter { $0.event.fault?.name == "pairingVersion" }
        XCTAssertEqual(refusals.count, 3, "each old hello is audited")
    }

    func testAnExpiredWindowRefusesEvenTheRightCode() throws {
        try car.start(["--pairing-window-seconds", "1"])
        let key = try car.keygen("owner")
        let pair = try car.agentTool(["pair", "--state-dir", car.stateDir])
        XCTAssertTrue(pair.stdout.hasSuffix("expires-in 1\n"), pair.stdout)
        let code = String(try XCTUnwrap(pair.stdout.split(separator: "\n").first).dropFirst(5))
        usleep(1_300_000)
        let result = try car.enroll(key.path, code: code)
        XCTAssertEqual(result.status, 1)
        XCTAssertEqual(result.stdout, "fault: pairingClosed (30)\n")
    }

    func testPairRefusesWithoutAnAgentAndWithAFullKeychain() throws {
        let none = try car.agentTool(["pair", "--state-dir", car.stateDir])
        XCTAssertEqual(none.status, 1)
        XCTAssertEqual(none.stdout, "")
        XCTAssertTrue(none.stderr.contains("no agent is running for this state directory"), none.stderr)

        try car.start(["--key-slots", "1"])
        _ = try car.enrollOwner()
        let full = try car.agentTool(["pair", "--state-dir", car.stateDir])
        XCTAssertEqual(full.status, 1)
        XCTAssertEqual(full.stdout, "", "no code for a window that could only fail")
        XCTAssertTrue(full.stderr.contains("keychain full (1 of 1 key slots in use)"), full.stderr)
        XCTAssertEqual(full.stderr.filter { $0 == "\n" }.count, 1, "one line")

        let usage = try car.agentTool(["pair"])
        XCTAssertEqual(usage.status, 2)
        XCTAssertTrue(usage.stderr.contains("--state-dir"), usage.stderr)
    }

    func testPairJSONAndTheControlSocket() throws {
        try car.start()
        XCTAssertEqual(try Files.mode(of: car.controlPath), 0o600)
        let json = try car.agentTool(["pair", "--state-dir", car.stateDir + "/", "--json"])
        XCTAssertEqual(json.status, 0, json.stderr)
        struct Pair: Decodable { let code: String; let expiresInSeconds: Int }
        let decoded = try JSONDecoder().decode(Pair.self, from: Data(json.stdout.utf8))
        XCTAssertEqual(decoded.expiresInSeconds, 60)
        XCTAssertEqual(decoded.code.count, 6)
        XCTAssertTrue(decoded.code.allSatisfy(\.isNumber))

        // The same line protocol the serial console shares.
        let status = try ControlSocket.exchange("status\n", path: car.controlPath)
        XCTAssertEqual(status.last, "ok", "\(status)")
        XCTAssertTrue(status.contains("vehicle \(AgentHarness.vehicle)"), "\(status)")
        XCTAssertTrue(status.contains { $0.hasPrefix("pairing open expires-in ") }, "\(status)")
        XCTAssertTrue(status.contains("keys active 0 owners 0 shared 0 revoked 0 free 32 of 32"), "\(status)")
        XCTAssertTrue(status.contains("clock not-trusted mark none"), "\(status)")
        XCTAssertEqual(try ControlSocket.exchange("pair-cancel\n", path: car.controlPath), ["pairing cancelled", "ok"])
        XCTAssertTrue(try ControlSocket.exchange("status\n", path: car.controlPath).contains("pairing closed"))
        XCTAssertEqual(try ControlSocket.exchange("open sesame\n", path: car.controlPath), ["error unknown command 'open' (try help)"])
        let long = try ControlSocket.exchange(String(repeating: "x", count: 300) + "\n", path: car.controlPath)
        XCTAssertEqual(long, ["error line longer than 256 bytes"])
    }
}

/// Raw access to DIR/control.sock: send text, read lines until the final `ok` / `error ...`.
enum ControlSocket {
    static func exchange(_ text: String, path: String) throws -> [String] {
        let socket = try UnixSocket.connect(path: path)
        defer { socket.close() }
        try socket.setSocketTimeouts(milliseconds: 5000)
        _ = try socket.sendSome(Bytes(text.utf8)[...])
        var buffer = ""
        while true {
            guard case .data(let bytes) = try socket.receive(upTo: 4096) else { return buffer.split(separator: "\n").map(String.init) }
            buffer += String(decoding: bytes, as: UTF8.self)
            let lines = buffer.split(separator: "\n").map(String.init)
            if buffer.hasSuffix("\n"), let last = lines.last, last == "ok" || last.hasPrefix("error ") { return lines }
        }
    }
}
