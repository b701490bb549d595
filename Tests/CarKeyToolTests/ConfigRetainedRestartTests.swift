// After a restart the broker hands the car its retained, already applied configuration again:
// one info line saying so, not "rejected: duplicate", and nothing applied or reported twice.
import XCTest
import Drivers
import TestHarness
#if canImport(Glibc)
import Glibc
#endif

final class ConfigRetainedRestartTests: XCTestCase {
    func testTheRetainedDocumentAfterARestartIsAlreadyReceivedNotRejected() throws {
        let broker = try MosquittoBroker()
        try broker.start()
        let car = AgentHarness()
        let fleet = try car.keygen("fleet")
        let config = car.folder + "/agent.json"
        try Files.writeAtomically(Array(#"{"remote": {"fleetKeys": ["\#(fleet.publicHex)"]}}"#.utf8), to: config)
        try Files.writeAtomically(Array(#"{"logLevel": "info"}"#.utf8), to: car.folder + "/desired.json")
        let signed = try Subprocess.run("carkey", ["config", "sign", "--key", fleet.path, "--vehicle", AgentHarness.vehicle, "--version", "1",
                                                   "--in", car.folder + "/desired.json", "--envelope"])
        XCTAssertEqual(signed.status, 0, signed.stderr)
        let envelope = signed.stdout.trimmingCharacters(in: .whitespacesAndNewlines)

        let first = try car.start(clockSync: "yes", ["--config", config, "--mqtt", broker.url])
        XCTAssertEqual(system("mosquitto_pub -h 127.0.0.1 -p \(broker.port) -r -q 1 -t vehicles/\(AgentHarness.vehicle)/config/desired -m '\(envelope)'"), 0)
        XCTAssertTrue(first.wait(timeoutSeconds: 20) { first.stderr.contains("config: version 1 applied") }, first.stderr)
        XCTAssertEqual(car.stop(), 0)

        let second = try car.start(clockSync: "yes", ["--config", config, "--mqtt", broker.url])
        let line = "cloud: retained message on vehicles/\(AgentHarness.vehicle)/config/desired already received (applied or answered before); ignored"
        XCTAssertTrue(second.wait(timeoutSeconds: 20) { second.stderr.contains(line) }, second.stderr)
        XCTAssertFalse(second.stderr.contains("rejected"), second.stderr)
        XCTAssertFalse(second.stderr.contains("config: version 1 applied"), "applied once: \(second.stderr)")
        XCTAssertEqual(try car.events().filter { $0.event.kind.rawValue == "config" }.count, 1)
    }
}
