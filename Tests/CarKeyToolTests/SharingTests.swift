// Shared keys end to end: an owner enrolled by pairing signs shares (`carkey share`), a second
// phone presents them (`carkey phone --share`), the owner revokes them (`carkey revoke` +
// `carkey phone revoke --object`). Trusted time decides whether time-limited shares work.
import XCTest
import Drivers
import Protocol
#if canImport(Glibc)
import Glibc
#endif

final class SharingTests: XCTestCase {
    private var car: AgentHarness!
    private var owner: (path: String, publicHex: String) = ("", "")

    override func setUp() { car = AgentHarness() }
    override func tearDown() { car = nil }

    /// Agent with the given clock, and an owner enrolled through the pairing window.
    private func startWithOwner(clockSync: String = "yes", _ extra: [String] = []) throws {
        try car.start(clockSync: clockSync, extra)
        owner = try car.enrollOwner()
    }

    private static func now() -> Int64 {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Int64(spec.tv_sec)
    }

    /// `carkey share` by the owner for `holderHex`; returns the certificate path and serial.
    private func share(_ level: String, to holderHex: String, name: String, notBefore: Int64? = nil,
                       notAfter: Int64 = SharingTests.now() + 86_400) throws -> (path: String, serial: String) {
        let path = car.folder + "/" + name + ".share"
        var arguments = ["share", "--owner", owner.path, "--holder", holderHex, "--vehicle", AgentHarness.vehicle,
                         "--permissions", level, "--not-after", ISO8601.format(notAfter), "--out", path]
        if let notBefore { arguments += ["--not-before", ISO8601.format(notBefore)] }
        let result = try Subprocess.run("carkey", arguments)
        XCTAssertEqual(result.status, 0, result.stderr)
        let serial = result.stdout.split(separator: "\n").first { $0.hasPrefix("serial ") }.map { String($0.dropFirst(7)) }
        return (path, try XCTUnwrap(serial))
    }

    /// The holder's visit: pinned car (a holder has no .car file), presenting `share`.
    private func holder(_ command: String, _ key: String, share: String?) throws -> ProcessResult {
        try car.phone(command, key: key, pinned: true, extra: share.map { ["--share", $0] } ?? [])
    }

    /// `carkey revoke --serial` signed by the owner, sent by the owner's phone.
    private func revoke(serial: String) throws -> ProcessResult {
        let object = car.folder + "/revoke-\(serial).bin"
        let signed = try Subprocess.run("carkey", ["revoke", "--owner", owner.path, "--vehicle", AgentHarness.vehicle,
                                                   "--serial", serial, "--out", object])
        XCTAssertEqual(signed.status, 0, signed.stderr)
        return try car.phone("revoke", key: owner.path, extra: ["--object", object])
    }

    func testEachLevelAllowsItsCommandsAndRefusesTheRest() throws {
        try startWithOwner()
        let levels: [(String, allowed: [String], refused: [String])] = [
            ("full", ["unlock", "lock", "trunk", "status"], []),
            ("unlock-only", ["unlock", "status"], ["lock", "trunk"]),
            ("trunk-only", ["trunk"], ["unlock", "lock"]),
            ("lock-only", ["lock"], ["unlock", "trunk"]),
        ]
        for (level, allowed, refused) in levels {
            let key = try car.keygen("holder-\(level)")
            let certificate = try share(level, to: key.publicHex, name: level)
            // The first use presents the certificate; after it the car knows the key.
            for (index, command) in allowed.enumerated() {
                let result = try holder(command, key.path, share: index == 0 ? certificate.path : nil)
                XCTAssertEqual(result.firstLine, "ok", "\(level) \(command): \(result.stdout) \(result.stderr)")
                XCTAssertTrue(result.stdout.contains("key: shared, permissions "), result.stdout)
            }
            for command in refused {
                let result = try holder(command, key.path, share: nil)
                XCTAssertEqual(result.status, 1)
                XCTAssertEqual(result.firstLine, "fault: insufficientPermission (5)", "\(level) \(command)")
            }
            // A shared key never has manage: it cannot send a revocation.
            let object = car.folder + "/\(level)-revoke.bin"
            XCTAssertEqual(try Subprocess.run("carkey", ["revoke", "--owner", key.path, "--vehicle", AgentHarness.vehicle,
                                                         "--serial", certificate.serial, "--out", object]).status, 0)
            XCTAssertEqual(try holder("revoke", key.path, share: nil).status, 2, "--object is required")
            XCTAssertEqual(try car.phone("revoke", key: key.path, pinned: true, extra: ["--object", object]).firstLine,
                           "fault: insufficientPermission (5)")
        }

        let keys = try car.agentTool(["keys", "--state-dir", car.stateDir])
        XCTAssertEqual(keys.status, 0, keys.stderr)
        for level in ["unlock-only", "trunk-only", "lock-only", "full"] {
            XCTAssertTrue(keys.stdout.contains("  shared  \(level)  "), "\(level) in\n\(keys.stdout)")
        }
        XCTAssertTrue(keys.stdout.contains("5 active key(s): 1 owner, 4 shared; 0 revoked"), keys.stdout)
        XCTAssertEqual(car.stop(), 0)
        let installs = try car.events().filter { $0.event.kind == .share }
        XCTAssertEqual(installs.count, 4, "one event per installed share")
        XCTAssertTrue(installs.allSatisfy { $0.event.action == "install share" && $0.event.result == "installed" })
    }

    func testExpiredNotYetValidAndReSharedCertificatesAreRefused() throws {
        try startWithOwner()
        let now = Self.now()
        // `carkey share` refuses a past not-after, so the expired one is signed here.
        let expiredKey = try car.keygen("expired")
        let ownerKey = try P256PrivateKey(pemRepresentation: String(decoding: try Files.read(owner.path), as: UTF8.self))
        let expired = try ShareCertificate.issue(by: ownerKey, holder: try P256PublicKey(sec1: Bytes(hex: expiredKey.publicHex)!),
                                                 vehicleID: try VehicleID(AgentHarness.vehicle), permissions: .unlock,
                                                 notBefore: UInt32(now - 7200), notAfter: UInt32(now - 3600),
                                                 serial: try ShareSerial.random(SystemRandom()))
        let expiredPath = car.folder + "/expired.share"
        try Files.writeAtomically(expired.encoded(), to: expiredPath)
        XCTAssertEqual(try holder("unlock", expiredKey.path, share: expiredPath).firstLine, "fault: expired (3)")

        let earlyKey = try car.keygen("early")
        let early = try share("unlock-only", to: earlyKey.publicHex, name: "early", notBefore: now + 3600)
        XCTAssertEqual(try holder("unlock", earlyKey.path, share: early.path).firstLine, "fault: notYetValid (4)")

        // A holder of a full share signs a share of its own: only owners may share.
        let sharer = try car.keygen("sharer")
        XCTAssertEqual(try holder("status", sharer.path, share: try share("full", to: sharer.publicHex, name: "sharer").path).firstLine, "ok")
        let third = try car.keygen("third")
        let reShared = car.folder + "/reshared.share"
        XCTAssertEqual(try Subprocess.run("carkey", ["share", "--owner", sharer.path, "--holder", third.publicHex,
                                                     "--vehicle", AgentHarness.vehicle, "--permissions", "unlock-only",
                                                     "--not-after", ISO8601.format(now + 3600), "--out", reShared]).status, 0)
        XCTAssertEqual(try holder("unlock", third.path, share: reShared).firstLine, "fault: invalidCertificate (25)")

        // None of them took a slot.
        let keys = try car.agentTool(["keys", "--state-dir", car.stateDir])
        XCTAssertTrue(keys.stdout.contains("2 active key(s): 1 owner, 1 shared"), keys.stdout)
    }

    func testARevokedShareCannotBeUsedOrInstalledAgain() throws {
        try startWithOwner()
        let used = try car.keygen("used")
        let usedShare = try share("unlock-only", to: used.publicHex, name: "used")
        XCTAssertEqual(try holder("unlock", used.path, share: usedShare.path).firstLine, "ok")
        // Revoked before its holder ever came: it must never install.
        let unused = try car.keygen("unused")
        let unusedShare = try share("unlock-only", to: unused.publicHex, name: "unused")

        let first = try revoke(serial: usedShare.serial)
        XCTAssertEqual(first.firstLine, "ok", first.stdout + first.stderr)
        XCTAssertTrue(first.stdout.contains("command: revoke"), first.stdout)
        XCTAssertEqual(try revoke(serial: unusedShare.serial).firstLine, "ok")

        XCTAssertEqual(try holder("unlock", used.path, share: nil).firstLine, "fault: revoked (2)")
        XCTAssertEqual(try holder("unlock", used.path, share: usedShare.path).firstLine, "fault: revoked (2)", "not re-installed")
        XCTAssertEqual(try holder("unlock", unused.path, share: unusedShare.path).firstLine, "fault: revoked (2)")
        XCTAssertEqual(try car.phone("unlock", key: owner.path).firstLine, "ok", "the owner is untouched")

        let keys = try car.agentTool(["keys", "--state-dir", car.stateDir])
        XCTAssertTrue(keys.stdout.contains("1 active key(s): 1 owner, 0 shared; 1 revoked"), keys.stdout)
        XCTAssertTrue(keys.stdout.contains("revocation serial \(usedShare.serial) by \(try car.keyIDHex(owner.publicHex))"), keys.stdout)

        // The owner cannot revoke the last owner key.
        let ownerID = try car.keyIDHex(owner.publicHex)
        let object = car.folder + "/self.bin"
        XCTAssertEqual(try Subprocess.run("carkey", ["revoke", "--owner", owner.path, "--vehicle", AgentHarness.vehicle,
                                                     "--key-id", ownerID, "--out", object]).status, 0)
        XCTAssertEqual(try car.phone("revoke", key: owner.path, extra: ["--object", object]).firstLine, "fault: lastOwnerKey (29)")

        // Revocations survive a restart.
        XCTAssertEqual(car.stop(), 0)
        try car.start(clockSync: "yes")
        XCTAssertEqual(try holder("unlock", used.path, share: usedShare.path).firstLine, "fault: revoked (2)")
        XCTAssertEqual(try holder("unlock", unused.path, share: unusedShare.path).firstLine, "fault: revoked (2)")
        XCTAssertEqual(car.stop(), 0)
        let revocations = try car.events().filter { $0.event.kind == .revocation }
        XCTAssertEqual(revocations.map(\.event.result), ["revoked", "revoked"])
        XCTAssertTrue(revocations.allSatisfy { $0.event.actor == ownerID })
        XCTAssertEqual(revocations.first?.event.detailJSON?.contains(#""revokedKeys":["\#(try car.keyIDHex(used.publicHex))"]"#), true)
    }

    func testARevocationEndsAnOpenSessionAtOnce() throws {
        try startWithOwner()
        let holderKey = try P256PrivateKey.generate()
        let certificate = try share("full", to: holderKey.publicKey.sec1.hexString, name: "session")

        // The holder's phone keeps its session open while the owner revokes the share.
        let pem = String(decoding: try Files.read(car.stateDir + "/car-identity.pub"), as: UTF8.self)
        var configuration = PhoneConfiguration(longTermKey: holderKey, carIdentityKey: try P256PublicKey(pemRepresentation: pem),
                                               vehicleID: try VehicleID(AgentHarness.vehicle))
        configuration.shareCertificate = try Files.read(certificate.path)
        var phone = PhoneProtocolSession(configuration: configuration)
        let link = try SimulatedLinkClient(socketPath: car.socketPath, timeoutMillis: 5000)
        try link.send(try phone.start())
        guard case .send(let response) = try phone.receive(try link.receive(), now: phoneNow()) else { return XCTFail("no challenge") }
        try link.send(response)
        guard case .established = try phone.receive(try link.receive(), now: phoneNow()) else { return XCTFail("no session") }
        try link.send(try phone.command(.unlock, now: phoneNow()))
        guard case .response(let unlocked) = try phone.receive(try link.receive(), now: phoneNow()) else { return XCTFail("no response") }
        XCTAssertTrue(unlocked.isOK)

        XCTAssertEqual(try revoke(serial: certificate.serial).firstLine, "ok")

        // The car tells the open session why, then closes the link.
        guard case .response(let last) = try phone.receive(try link.receive(), now: phoneNow()) else { return XCTFail("no final response") }
        XCTAssertEqual(last.fault, .revoked)
        XCTAssertThrowsError(try link.receive()) { XCTAssertEqual($0 as? SimulatedLinkError, .closedByPeer) }
        XCTAssertEqual(try holder("status", holderKey.pemFile(in: car.folder), share: nil).firstLine, "fault: revoked (2)")

        XCTAssertEqual(car.stop(), 0)
        let closed = try car.events().filter { $0.event.action == "session" && $0.event.result == "closed" && $0.event.fault?.name == "revoked" }
        XCTAssertEqual(closed.map(\.event.actor), [KeyID(publicKey: holderKey.publicKey).bytes.hexString])
    }

    func testAnUntrustedClockRefusesTimeLimitedSharesButNotTheOwner() throws {
        // A fresh car, no NTP, no trusted-time mark: one owner alone cannot vouch for the time.
        try startWithOwner(clockSync: "no")
        let key = try car.keygen("guest")
        let certificate = try share("unlock-only", to: key.publicHex, name: "guest")
        let refused = try holder("unlock", key.path, share: certificate.path)
        XCTAssertEqual(refused.firstLine, "fault: clockNotTrusted (15)")
        // The hint says what to do on a real car and on a simulated one, as does the start-up line.
        XCTAssertTrue(refused.stderr.contains("NTP") && refused.stderr.contains("--clock-sync yes"), refused.stderr)
        XCTAssertTrue(car.agent!.stderr.contains("clock not trusted") && car.agent!.stderr.contains("refused (clockNotTrusted) until NTP")
                      && car.agent!.stderr.contains("a simulated car trusts this machine's clock with --clock-sync yes"), car.agent!.stderr)
        let ownerUnlock = try car.phone("unlock", key: owner.path)
        XCTAssertEqual(ownerUnlock.firstLine, "ok")
        XCTAssertTrue(ownerUnlock.stdout.contains("car clock not trusted"), ownerUnlock.stdout)
        XCTAssertEqual(try holder("unlock", key.path, share: certificate.path).firstLine, "fault: clockNotTrusted (15)")
        XCTAssertTrue(car.agent!.stderr.contains("waiting for a second source"), car.agent!.stderr)
    }

    func testAnOwnerHandshakeAnchorsTimeAfterARestartWithoutNTP() throws {
        // First run with a synchronised clock: the mark is written (at once, and at stop).
        try startWithOwner(clockSync: "yes")
        XCTAssertTrue(car.agent!.stderr.contains("carkey-agent: clock trusted (system clock assumed synchronised"), car.agent!.stderr)
        let key = try car.keygen("guest")
        let certificate = try share("trunk-only", to: key.publicHex, name: "guest")
        XCTAssertEqual(try holder("trunk", key.path, share: certificate.path).firstLine, "ok")
        XCTAssertEqual(car.stop(), 0)
        let mark = try XCTUnwrap(try CarStore.open(stateDirectory: car.stateDir).trustedTime())
        XCTAssertLessThanOrEqual(abs(mark - Self.now()), 5)

        // Restart without NTP: untrusted until the owner's signed timestamp, within 7 days of
        // the mark, anchors this boot's time.
        let restarted = try car.start(clockSync: "no")
        XCTAssertTrue(restarted.stderr.contains("clock not trusted (system clock assumed not synchronised (--clock-sync no); trusted-time mark "),
                      restarted.stderr)
        XCTAssertEqual(try holder("trunk", key.path, share: nil).firstLine, "fault: clockNotTrusted (15)")
        XCTAssertEqual(try car.phone("status", key: owner.path).firstLine, "ok")
        XCTAssertTrue(restarted.stderr.contains("trusted time anchored at"), restarted.stderr)
        let trunk = try holder("trunk", key.path, share: nil)
        XCTAssertEqual(trunk.firstLine, "ok", trunk.stdout + trunk.stderr)
        XCTAssertTrue(trunk.stdout.contains("(car clock trusted)"), trunk.stdout)
        // A guest's handshake never moves time: only owners (and later fleet messages) do.
        XCTAssertFalse(restarted.stderr.contains("by owner key \(try car.keyIDHex(key.publicHex))"))
    }

    func testAFullKeychainRefusesANewShare() throws {
        try startWithOwner(clockSync: "yes", ["--key-slots", "2"])
        let first = try car.keygen("first")
        XCTAssertEqual(try holder("lock", first.path, share: try share("lock-only", to: first.publicHex, name: "first").path).firstLine, "ok")
        let second = try car.keygen("second")
        XCTAssertEqual(try holder("lock", second.path, share: try share("lock-only", to: second.publicHex, name: "second").path).firstLine,
                       "fault: keychainFull (21)")
    }

    private func phoneNow() -> ProtocolTime {
        ProtocolTime(monotonicMillis: SystemClock().nowMillis(), wallSeconds: Self.now(), wallClockTrusted: true)
    }
}

extension P256PrivateKey {
    /// Writes the key as PEM for `carkey phone --key` and returns the path.
    func pemFile(in folder: String) throws -> String {
        let path = folder + "/" + KeyID(publicKey: publicKey).bytes.hexString + ".pem"
        try Files.writeAtomically(Bytes(try pemRepresentation().utf8), to: path, mode: 0o600)
        return path
    }
}
