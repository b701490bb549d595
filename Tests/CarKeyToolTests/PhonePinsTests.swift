// One phone key enrolled with two cars: KEYFILE.car keeps one pin per vehicle ID, so both cars
// keep working (the car names itself in its Challenge and proves its pinned identity); a car
// not pinned is refused with advice, not as if it were an attack; a malformed pin file stops an
// enrollment before the car spends its code.
import XCTest
import Drivers
import Protocol

final class PhonePinsTests: XCTestCase {
    private var cars: [AgentHarness] = []

    override func tearDown() { cars = [] }

    private func car(_ vehicle: String) throws -> AgentHarness {
        let car = AgentHarness()
        try car.start(clockSync: "yes", ["--console", "none", "--vehicle-id", vehicle])
        cars.append(car)
        return car
    }

    private func pinnedVehicles(_ path: String) throws -> [String] {
        String(decoding: try Files.read(path), as: UTF8.self).split(separator: "\n")
            .filter { $0.hasPrefix("vehicle-id ") }.map { String($0.dropFirst("vehicle-id ".count)) }
    }

    func testOneKeyEnrolledWithTwoCarsKeepsWorkingWithBoth() throws {
        let first = try car("OCK-PIN-0001"), second = try car("OCK-PIN-0002")
        let key = try first.keygen("owner")
        let pins = key.path + ".car"
        let once = try first.enroll(key.path, code: try first.pair())
        XCTAssertEqual(once.firstLine, "enrolled", once.stdout + once.stderr)
        let oneCarFile = try Files.read(pins)
        let twice = try second.enroll(key.path, code: try second.pair())
        XCTAssertEqual(twice.firstLine, "enrolled", twice.stdout + twice.stderr)
        XCTAssertTrue(twice.stdout.contains("pinned cars: OCK-PIN-0001, OCK-PIN-0002"), twice.stdout)
        XCTAssertEqual(try pinnedVehicles(pins), ["OCK-PIN-0001", "OCK-PIN-0002"], "the first car's pin is kept")
        XCTAssertEqual(try Files.mode(of: pins), 0o600)

        // Without flags each car answers as itself; with --vehicle the pin is picked up front.
        for (car, vehicle) in [(first, "OCK-PIN-0001"), (second, "OCK-PIN-0002"), (first, "OCK-PIN-0001")] {
            let unlock = try car.phone("unlock", key: key.path)
            XCTAssertEqual(unlock.firstLine, "ok", "\(vehicle): \(unlock.stdout) \(unlock.stderr)")
            let named = try car.phone("lock", key: key.path, extra: ["--vehicle", vehicle])
            XCTAssertEqual(named.firstLine, "ok", "\(vehicle) by --vehicle: \(named.stdout) \(named.stderr)")
        }
        // --vehicle names the car the phone must meet: the other car is refused before signing.
        let crossed = try second.phone("status", key: key.path, extra: ["--vehicle", "OCK-PIN-0001"])
        XCTAssertEqual(crossed.firstLine, "fault: wrongVehicle (14)", crossed.stdout)
        let unknown = try first.phone("status", key: key.path, extra: ["--vehicle", "OCK-PIN-0009"])
        XCTAssertEqual(unknown.status, 2, unknown.stderr)
        XCTAssertTrue(unknown.stderr.contains("pins no car with vehicle ID OCK-PIN-0009 (it pins OCK-PIN-0001, OCK-PIN-0002)"), unknown.stderr)
        // A scan looks for one car's rotating identifier: with two pinned it must be told which.
        let scan = try Subprocess.run("carkey", ["phone", "--key", key.path, "--ble", "hci0", "--scan", "unlock"])
        XCTAssertEqual(scan.status, 2, scan.stderr)
        XCTAssertTrue(scan.stderr.contains("name the one to scan for with '--vehicle'"), scan.stderr)

        // A car this key was never enrolled with says so in the clear (unknownKey); one it was
        // enrolled with but that the file does not pin (as an older tool left it, keeping only
        // the last car) is refused before signing, with what to do instead of an alarm.
        let third = try car("OCK-PIN-0003")
        XCTAssertEqual(try third.phone("status", key: key.path).firstLine, "fault: unknownKey (1)")
        let both = String(decoding: try Files.read(pins), as: UTF8.self)
        let onlySecond = both.components(separatedBy: "\n\n")[1]
        try Files.writeAtomically(Bytes(onlySecond.utf8), to: pins, mode: 0o600)
        let unpinned = try first.phone("status", key: key.path)
        XCTAssertEqual(unpinned.firstLine, "fault: wrongVehicle (14)", unpinned.stdout)
        XCTAssertTrue(unpinned.stderr.contains("this car says it is vehicle OCK-PIN-0001, and this visit pins OCK-PIN-0002")
                      && unpinned.stderr.contains("enroll this key with it"), unpinned.stderr)
        // The first car's block naming the second car's identity: a car that cannot prove it.
        let lines = both.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let identities = lines.filter { $0.hasPrefix("car-identity ") }
        let swapped = lines.map { $0 == identities[0] ? identities[1] : $0 }.joined(separator: "\n")
        try Files.writeAtomically(Bytes(swapped.utf8), to: pins, mode: 0o600)
        let unproven = try first.phone("status", key: key.path, extra: ["--vehicle", "OCK-PIN-0001"])
        XCTAssertTrue(unproven.firstLine.hasPrefix("refused: car signature does not verify"), unproven.stdout)
        XCTAssertTrue(unproven.stderr.contains("does not prove the identity key pinned for it") && unproven.stderr.contains("enroll again"),
                      unproven.stderr)

        // The file a single enrollment writes is the old single-pin format, and still reads.
        try Files.writeAtomically(oneCarFile, to: pins, mode: 0o600)
        XCTAssertEqual(try first.phone("status", key: key.path).firstLine, "ok")
    }

    func testAReplacedCarIdentityReplacesOnlyItsPin() throws {
        let first = try car("OCK-PIN-0001"), second = try car("OCK-PIN-0002")
        let key = try first.keygen("owner")
        XCTAssertEqual(try first.enroll(key.path, code: try first.pair()).firstLine, "enrolled")
        XCTAssertEqual(try second.enroll(key.path, code: try second.pair()).firstLine, "enrolled")
        // The first car again with a new store (a new identity key, same vehicle ID).
        XCTAssertEqual(first.stop(), 0)
        let rebuilt = try car("OCK-PIN-0001")
        XCTAssertEqual(try rebuilt.phone("status", key: key.path).firstLine, "fault: unknownKey (1)", "a new store knows no keys")
        let again = try rebuilt.enroll(key.path, code: try rebuilt.pair())
        XCTAssertEqual(again.firstLine, "enrolled", again.stdout + again.stderr)
        XCTAssertTrue(again.stderr.contains("vehicle OCK-PIN-0001 was pinned to car key id"), again.stderr)
        XCTAssertEqual(try pinnedVehicles(key.path + ".car"), ["OCK-PIN-0001", "OCK-PIN-0002"])
        XCTAssertEqual(try rebuilt.phone("unlock", key: key.path).firstLine, "ok")
        XCTAssertEqual(try second.phone("unlock", key: key.path).firstLine, "ok")
    }

    func testAMalformedPinFileStopsAnEnrollmentBeforeTheCodeIsSpent() throws {
        let first = try car("OCK-PIN-0001")
        let key = try first.keygen("owner")
        try Subprocess.write("vehicle-id OCK-PIN-0001\n", to: key.path + ".car")
        let code = try first.pair()
        let refused = try first.enroll(key.path, code: code)
        XCTAssertEqual(refused.status, 2, refused.stdout + refused.stderr)
        XCTAssertTrue(refused.stderr.contains("is not a paired-car file"), refused.stderr)
        XCTAssertEqual(try Files.read(key.path + ".car"), Bytes("vehicle-id OCK-PIN-0001\n".utf8), "left as it was")
        XCTAssertTrue(try ControlSocket.exchange("status\n", path: first.controlPath).contains { $0.hasPrefix("pairing open") },
                      "the car never saw the code")
    }
}
