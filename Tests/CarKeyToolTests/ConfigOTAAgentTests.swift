// OTA configuration end to end: the built agent with a config file and --mqtt against a real
// mosquitto broker, a fleet key provisioned in that file, documents signed by `carkey config
// sign --envelope` and published retained on vehicles/{id}/config/desired. The outcome comes
// back retained on config/reported; the file on disk changes only for an applied document.
// Also: the agent's last audit checkpoint on a clean stop.
import XCTest
import Drivers
import Protocol
import TestHarness
#if canImport(Glibc)
import Glibc
#endif

final class ConfigOTAAgentTests: XCTestCase {
    private let vehicle = AgentHarness.vehicle

    private func envelope(key: String, version: Int, json: String, folder: String) throws -> String {
        let input = folder + "/desired-\(version)-\(UInt32.random(in: 0...UInt32.max)).json"
        try Files.writeAtomically(Array(json.utf8), to: input)
        let result = try Subprocess.run("carkey", ["config", "sign", "--key", key, "--vehicle", vehicle, "--version", "\(version)",
                                                   "--in", input, "--out", input + ".bin", "--envelope"])
        XCTAssertEqual(result.status, 0, result.stderr)
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    private func publish(_ broker: MosquittoBroker, _ envelope: String) {
        XCTAssertEqual(system("mosquitto_pub -h 127.0.0.1 -p \(broker.port) -r -q 1 -t vehicles/\(vehicle)/config/desired -m '\(envelope)'"), 0)
    }

    func testASignedDocumentAppliesLiveAndOlderOrForbiddenOnesAreRefused() throws {
        let broker = try MosquittoBroker()
        try broker.start()
        let car = AgentHarness()
        let fleet = try car.keygen("fleet")
        let config = car.folder + "/agent.json"
        try Files.writeAtomically(Array(#"{"logLevel": "info", "remote": {"fleetKeys": ["\#(fleet.publicHex)"]}}"#.utf8), to: config)
        let agent = try car.start(clockSync: "yes", ["--config", config, "--mqtt", broker.url])
        XCTAssertTrue(agent.wait(timeoutSeconds: 20) { agent.stderr.contains("cloud: connected") }, agent.stderr)
        let reported = try CloudTestSubscriber(url: broker.url, filter: "vehicles/\(vehicle)/config/reported")

        // Version 1: a walk-away timer and the debug log level.
        publish(broker, try envelope(key: fleet.path, version: 1, json: #"{"logLevel": "debug", "proximity": {"walkAwaySeconds": 30}}"#,
                                     folder: car.folder))
        XCTAssertTrue(reported.wait(seconds: 15) { reported.received.contains { String(decoding: $0.payload, as: UTF8.self).contains(#""result":"applied""#) } },
                      agent.stderr)
        let onDisk = String(decoding: try Files.read(config, limit: 1 << 16), as: UTF8.self)
        XCTAssertTrue(onDisk.contains("walkAwaySeconds") && onDisk.contains("30"), onDisk)
        XCTAssertTrue(onDisk.contains(fleet.publicHex), "keys the cloud may not change are kept: \(onDisk)")

        // The same version again (a new signature, so not a re-delivery): rollback refused.
        publish(broker, try envelope(key: fleet.path, version: 1, json: #"{"logLevel": "warn"}"#, folder: car.folder))
        XCTAssertTrue(reported.wait(seconds: 15) { reported.received.contains { String(decoding: $0.payload, as: UTF8.self).contains(#""result":"refused""#) } },
                      agent.stderr)
        // A forbidden key (the vehicle ID) is refused whole, and the file is unchanged.
        publish(broker, try envelope(key: fleet.path, version: 2, json: #"{"logLevel": "warn", "vehicleID": "OTHER-CAR"}"#, folder: car.folder))
        XCTAssertTrue(reported.wait(seconds: 15) {
            reported.received.filter { String(decoding: $0.payload, as: UTF8.self).contains(#""result":"refused""#) }.count >= 2
        }, agent.stderr)
        XCTAssertEqual(String(decoding: try Files.read(config, limit: 1 << 16), as: UTF8.self), onDisk)
        let rows = try car.events().filter { $0.event.kind.rawValue == "config" }.map(\.event.result)
        XCTAssertEqual(rows, ["applied", "refused", "refused"], "one event per outcome")

        // A clean stop leaves a signed audit checkpoint covering the last event.
        XCTAssertEqual(car.stop(), 0)
        let store = try CarStore.open(stateDirectory: car.stateDir)
        let checkpoint = try XCTUnwrap(try store.auditCheckpoints(limit: 1).first, "no checkpoint at stop")
        XCTAssertEqual(checkpoint.seq, try store.events().last?.seq)
    }
}
