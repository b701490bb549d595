// --json on the commands that report something (docs/cli.md): exactly one JSON object on
// stdout, of the documented shape; hints stay on stderr; the exit status is the same as without.
import XCTest
import FoundationEssentials
import TestHarness

final class JSONOutputTests: XCTestCase {
    private func decode<T: Decodable>(_ type: T.Type, _ result: ProcessResult, file: StaticString = #filePath, line: UInt = #line) throws -> T {
        XCTAssertEqual(result.stdout.filter { $0 == "\n" }.count, 1, "one line: \(result.stdout)", file: file, line: line)
        return try JSONDecoder().decode(T.self, from: Data(result.stdout.utf8))
    }

    struct Fault: Decodable, Equatable { let code: Int; let name: String? }
    struct State: Decodable { let summary: String; let bits: Int; let locked: Bool; let driverDoorOpen: Bool; let anyDoorOpen: Bool
                              let trunkOpen: Bool; let trunkLocked: Bool }
    struct Visit: Decodable {
        struct Key: Decodable { let role: String; let permissions: String }
        let result: String; let fault: Fault?; let command: String; let vehicle: String; let vehicleState: State; let key: Key
        let carTime: String; let carClockTrusted: Bool; let handshakeMs: Double; let commandMs: Double
    }

    func testPhoneKeygenShareAndRevoke() throws {
        let car = AgentHarness()
        try car.start(clockSync: "yes", ["--console", "none"])
        let folder = car.folder

        let keygen = try Subprocess.run("carkey", ["keygen", "--out", folder + "/owner.pem", "--json"])
        XCTAssertEqual(keygen.status, 0, keygen.stderr)
        struct Made: Decodable { let publicKey: String; let keyID: String; let out: String }
        let made = try decode(Made.self, keygen)
        XCTAssertEqual(made.publicKey.count, 130)
        XCTAssertEqual(made.keyID, try car.keyIDHex(made.publicKey))
        XCTAssertEqual(made.out, folder + "/owner.pem")

        let enrolled = try car.enroll(folder + "/owner.pem", code: try car.pair(), extra: ["--json"])
        XCTAssertEqual(enrolled.status, 0, enrolled.stderr)
        struct Enrolled: Decodable { let result: String; let vehicle: String; let carKeyID: String; let advertisingKey: String; let saved: String
                                     let pinnedVehicles: [String] }
        let pinned = try decode(Enrolled.self, enrolled)
        XCTAssertEqual([pinned.result, pinned.vehicle, pinned.advertisingKey], ["enrolled", AgentHarness.vehicle, "received"])
        XCTAssertEqual(pinned.saved, folder + "/owner.pem.car")
        XCTAssertEqual(pinned.pinnedVehicles, [AgentHarness.vehicle])

        let unlock = try car.phone("unlock", key: folder + "/owner.pem", extra: ["--json"])
        XCTAssertEqual(unlock.status, 0, unlock.stderr)
        let visit = try decode(Visit.self, unlock)
        XCTAssertEqual([visit.result, visit.command, visit.vehicle, visit.vehicleState.summary, visit.key.role],
                       ["ok", "unlock", AgentHarness.vehicle, "unlocked, trunk locked", "owner"])
        XCTAssertNil(visit.fault)
        XCTAssertFalse(visit.vehicleState.locked)
        XCTAssertTrue(visit.vehicleState.trunkLocked && visit.carClockTrusted)
        XCTAssertNotNil(visit.carTime.range(of: #"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$"#, options: .regularExpression), visit.carTime)
        XCTAssertGreaterThan(visit.handshakeMs, 0)

        // A share for a guest, then the guest's refused trunk: a fault in the session.
        let guest = try car.keygen("guest")
        let shared = try Subprocess.run("carkey", ["share", "--key", folder + "/owner.pem", "--holder", guest.publicHex, "--vehicle", AgentHarness.vehicle,
                                                   "--permissions", "unlock-only", "--not-after", "2099-01-01T00:00:00Z", "--out", folder + "/guest.share", "--json"])
        XCTAssertEqual(shared.status, 0, shared.stderr)
        struct Share: Decodable { let serial: String; let holderKeyID: String; let vehicle: String; let permissions: String; let notBefore: String?
                                  let notAfter: String; let certificate: String; let out: String }
        let share = try decode(Share.self, shared)
        XCTAssertEqual(share.serial.count, 16)
        XCTAssertEqual(share.holderKeyID, try car.keyIDHex(guest.publicHex))
        XCTAssertEqual([share.vehicle, share.permissions, share.notAfter], [AgentHarness.vehicle, "unlock-only", "2099-01-01T00:00:00Z"])
        XCTAssertNil(share.notBefore)
        let trunk = try car.phone("trunk", key: guest.path, pinned: true, extra: ["--share", share.out, "--json"])
        XCTAssertEqual(trunk.status, 1, "a fault exits 1 with --json too")
        let refused = try decode(Visit.self, trunk)
        XCTAssertEqual(refused.result, "fault")
        XCTAssertEqual(refused.fault, Fault(code: 5, name: "insufficientPermission"))
        XCTAssertTrue(trunk.stderr.contains("The key does not grant this command"), "the hint stays on stderr: \(trunk.stderr)")

        let revoked = try Subprocess.run("carkey", ["revoke", "--key", folder + "/owner.pem", "--vehicle", AgentHarness.vehicle,
                                                    "--serial", share.serial, "--issued-at", "2026-01-02T00:00:00Z", "--out", folder + "/guest.revoke", "--json"])
        XCTAssertEqual(revoked.status, 0, revoked.stderr)
        struct Target: Decodable { let kind: String; let value: String }
        struct Revocation: Decodable { let target: Target; let vehicle: String; let issuedAt: String; let revocation: String; let out: String }
        let revocation = try decode(Revocation.self, revoked)
        XCTAssertEqual([revocation.target.kind, revocation.target.value, revocation.issuedAt], ["serial", share.serial, "2026-01-02T00:00:00Z"])

        // Faults before the session and refusals by the phone are objects too.
        let stranger = try car.keygen("stranger")
        let unknown = try car.phone("unlock", key: stranger.path, pinned: true, extra: ["--json"])
        XCTAssertEqual(unknown.status, 1)
        struct Early: Decodable { let result: String; let fault: Fault?; let stage: String? ; let reason: String? }
        let early = try decode(Early.self, unknown)
        XCTAssertEqual([early.result, early.stage], ["fault", "handshake"])
        XCTAssertEqual(early.fault, Fault(code: 1, name: "unknownKey"))
        let wrong = try Subprocess.run("carkey", ["phone", "--key", folder + "/owner.pem", "--connect", "unix:" + car.socketPath,
                                                  "--car-key", car.carKeyArgument, "--vehicle", "OCK-OTHER", "status", "--json"])
        XCTAssertEqual(wrong.status, 1)
        let refusal = try decode(Early.self, wrong)
        XCTAssertEqual(refusal.result, "refused")
        XCTAssertEqual(refusal.fault, Fault(code: 14, name: "wrongVehicle"))
        XCTAssertNotNil(refusal.reason)
        XCTAssertEqual(car.stop(), 0)
    }

    /// command send --json: the flag only changes what is printed, not what is sent.
    func testCommandSend() throws {
        let broker = try MosquittoBroker()
        try broker.start()
        let car = AgentHarness()
        let agent = try car.start(clockSync: "yes", ["--console", "none", "--mqtt", broker.url])
        XCTAssertTrue(agent.wait(timeoutSeconds: 20) { agent.stderr.contains("cloud: connected") }, agent.stderr)
        let owner = try car.enrollOwner()
        struct Sent: Decodable {
            struct Result: Decodable { let result: String; let command: String }
            let command: String; let sent: Bool; let result: Result?; let timedOut: Bool
        }
        func send(_ vehicle: String, _ extra: [String]) throws -> ProcessResult {
            try Subprocess.run("carkey", ["command", "send", "--mqtt", broker.url, "--key", owner.path, "--vehicle", vehicle,
                                          "--command", "status", "--json"] + extra)
        }
        let answered = try send(AgentHarness.vehicle, ["--wait-result", "--timeout", "15"])
        XCTAssertEqual(answered.status, 0, answered.stderr + agent.stderr)
        let result = try decode(Sent.self, answered)
        XCTAssertEqual(result.result?.result, "ok")
        XCTAssertEqual(result.result?.command, result.command, "the car's result names the command sent")
        XCTAssertTrue(result.sent)
        XCTAssertFalse(result.timedOut)

        let fired = try decode(Sent.self, try send(AgentHarness.vehicle, []))
        XCTAssertNil(fired.result)
        XCTAssertEqual(fired.command.count, 36)
        let unanswered = try send("OCK-NOBODY", ["--wait-result", "--timeout", "1"])
        XCTAssertEqual(unanswered.status, 1)
        let silence = try decode(Sent.self, unanswered)
        XCTAssertTrue(silence.timedOut)
        XCTAssertNil(silence.result)
        XCTAssertEqual(car.stop(), 0)
    }
}
