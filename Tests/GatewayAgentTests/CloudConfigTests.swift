// The cloud link's settings: the config file's "mqtt" object (errors name the key) and the
// --mqtt flags on top of it.
import XCTest
import CommandLineKit
import Drivers
@testable import carkey_agent

final class CloudConfigTests: XCTestCase {
    private func parse(_json json: String) throws(ConfigError) -> AgentConfig {
        try AgentConfig.parse(Array(json.utf8), baseDirectory: "/etc/opencarkey")
    }

    private func key(of json: String) -> String? {
        do {
            _ = try parse(_json: json)
            return nil
        } catch {
            return error.key
        }
    }

    func testMQTTObjectWithTLSFilesRelativeToTheConfigFolder() throws {
        let config = try parse(_json: #"{"mqtt":{"url":"mqtts://broker.example:8883","ca":"ca.crt","cert":"/etc/car.crt","key":"car.key","keepaliveSeconds":60,"willDelaySeconds":5}}"#)
        let cloud = try XCTUnwrap(config.cloud)
        XCTAssertEqual(cloud.endpoint, MQTTEndpoint(host: "broker.example", port: 8883, usesTLS: true))
        XCTAssertEqual(cloud.tls, MQTTTLSFiles(caFile: "/etc/opencarkey/ca.crt", certificateFile: "/etc/car.crt", keyFile: "/etc/opencarkey/car.key"))
        XCTAssertEqual(cloud.keepaliveSeconds, 60)
        XCTAssertEqual(cloud.willDelaySeconds, 5)
        XCTAssertTrue(config.displayLines(consoleEndpoint: "-", cloud: config.cloud).contains("mqtt.url: mqtts://broker.example:8883"))
    }

    func testNoMQTTMeansOffline() throws {
        XCTAssertNil(try parse(_json: "{}").cloud)
        XCTAssertNil(try CloudOptions.parse(ArgumentParser(options: CloudOptions.optionSpecs).parse([String]())))
    }

    func testMQTTErrorsNameTheKey() {
        XCTAssertEqual(key(of: #"{"mqtt":{}}"#), "mqtt.url")
        XCTAssertEqual(key(of: #"{"mqtt":{"url":"http://x"}}"#), "mqtt.url")
        XCTAssertEqual(key(of: #"{"mqtt":{"url":"mqtts://x"}}"#), "mqtt.ca", "mqtts needs a CA")
        XCTAssertEqual(key(of: #"{"mqtt":{"url":"mqtts://x","ca":"a","cert":"b"}}"#), "mqtt.cert", "certificate without key")
        XCTAssertEqual(key(of: #"{"mqtt":{"url":"mqtt://x","ca":"a"}}"#), "mqtt.cert", "TLS files for plain TCP")
        XCTAssertEqual(key(of: #"{"mqtt":{"url":"mqtt://x","keepaliveSeconds":1}}"#), "mqtt.keepaliveSeconds")
        XCTAssertEqual(key(of: #"{"mqtt":{"url":"mqtt://x","port":1}}"#), "mqtt.port")
    }

    /// A password in the URL (on the command line, visible in ps) was taken as part of the host
    /// name, and the endpoint's description, with the password, went into connect errors: the
    /// log and the outbox's last error. It is refused, and the refusal does not echo it.
    func testCredentialsInTheURLAreRefusedWithoutBeingEchoed() {
        XCTAssertThrowsError(try MQTTEndpoint(url: "mqtts://car:hunter2@broker.example:8883")) { error in
            XCTAssertFalse("\(error)".contains("hunter2"), "\(error)")
        }
        let parser = ArgumentParser(options: CloudOptions.optionSpecs)
        XCTAssertThrowsError(try CloudOptions.parse(parser.parse(["--mqtt", "mqtt://car:hunter2@broker:1883"]))) { error in
            XCTAssertFalse("\(error)".contains("hunter2"), "\(error)")
        }
        XCTAssertEqual(key(of: #"{"mqtt":{"url":"mqtt://car:hunter2@broker"}}"#), "mqtt.url")
    }

    func testFlagsOverrideTheFile() throws {
        let file = CloudOptions(endpoint: MQTTEndpoint(host: "a", port: 1883, usesTLS: false), tls: nil, keepaliveSeconds: 30, willDelaySeconds: 10)
        let parser = ArgumentParser(options: CloudOptions.optionSpecs)
        let moved = try CloudOptions.parse(parser.parse(["--mqtt", "mqtt://b:1884", "--mqtt-will-delay", "0"]), file: file)
        XCTAssertEqual(moved?.endpoint, MQTTEndpoint(host: "b", port: 1884, usesTLS: false))
        XCTAssertEqual(moved?.willDelaySeconds, 0)
        XCTAssertEqual(try CloudOptions.parse(parser.parse([String]()), file: file), file, "no flags: the file's settings")
        XCTAssertThrowsError(try CloudOptions.parse(parser.parse(["--mqtt", "mqtts://b"]), file: file)) { error in
            XCTAssertTrue("\(error)".contains("CA"), "\(error)")
        }
        XCTAssertThrowsError(try CloudOptions.parse(parser.parse(["--mqtt-ca", "x"])), "TLS flags need --mqtt")
    }

    // Issue 15: a cluster's nodes, tried in turn.

    private let a = MQTTEndpoint(host: "a", port: 1883, usesTLS: false)
    private let b = MQTTEndpoint(host: "b", port: 1884, usesTLS: false)

    func testRepeatedMQTTFlagsListTheNodesInOrder() throws {
        let parser = ArgumentParser(options: CloudOptions.optionSpecs)
        let options = try XCTUnwrap(try CloudOptions.parse(parser.parse(["--mqtt", "mqtt://a", "--mqtt", "mqtt://b:1884"])))
        XCTAssertEqual(options.endpoints, [a, b])
        XCTAssertEqual(options.heartbeatSeconds, 0, "the heartbeat is off by default")
        let file = CloudOptions(endpoints: [b], keepaliveSeconds: 45, heartbeatSeconds: 300)
        let replaced = try XCTUnwrap(try CloudOptions.parse(parser.parse(["--mqtt", "mqtt://a"]), file: file))
        XCTAssertEqual(replaced.endpoints, [a], "flags replace the file's list as a whole")
        XCTAssertEqual(replaced.keepaliveSeconds, 45)
        XCTAssertEqual(replaced.heartbeatSeconds, 300)
    }

    private func usageError(_ arguments: [String]) -> String? {
        let parser = ArgumentParser(options: CloudOptions.optionSpecs)
        do {
            _ = try CloudOptions.parse(parser.parse(arguments))
            return nil
        } catch {
            return "\(error)"
        }
    }

    func testBadNodeListsAreRefusedWithAClearReason() {
        XCTAssertEqual(usageError(["--mqtt", "mqtt://a", "--mqtt", "mqtts://b", "--mqtt-ca", "ca"])?.contains("not a mix"), true)
        XCTAssertEqual(usageError(["--mqtt", "mqtt://a", "--mqtt", "mqtt://a:1883"])?.contains("given twice"), true)
        XCTAssertEqual(usageError((1...9).flatMap { ["--mqtt", "mqtt://n\($0)"] })?.contains("at most 8"), true)
        XCTAssertNil(usageError((1...8).flatMap { ["--mqtt", "mqtt://n\($0)"] }))
        XCTAssertEqual(usageError(["--mqtt", "mqtt://a", "--mqtt", "mqtt://x:pw@b"])?.contains("pw"), false, "credentials never echoed")
        XCTAssertNotNil(usageError(["--mqtt-heartbeat", "60"]), "needs --mqtt")
    }

    func testHeartbeatIsOffOrAtLeastAMinute() throws {
        let parser = ArgumentParser(options: CloudOptions.optionSpecs)
        XCTAssertEqual(try CloudOptions.parse(parser.parse(["--mqtt", "mqtt://a", "--mqtt-heartbeat", "60"]))?.heartbeatSeconds, 60)
        XCTAssertEqual(try CloudOptions.parse(parser.parse(["--mqtt", "mqtt://a", "--mqtt-heartbeat", "0"]))?.heartbeatSeconds, 0)
        XCTAssertNotNil(usageError(["--mqtt", "mqtt://a", "--mqtt-heartbeat", "59"]))
        XCTAssertNotNil(usageError(["--mqtt", "mqtt://a", "--mqtt-heartbeat", "86401"]))
        XCTAssertEqual(try parse(_json: #"{"mqtt":{"url":"mqtt://a","heartbeatSeconds":3600}}"#).cloud?.heartbeatSeconds, 3600)
        XCTAssertEqual(key(of: #"{"mqtt":{"url":"mqtt://a","heartbeatSeconds":30}}"#), "mqtt.heartbeatSeconds")
    }

    func testConfigFileTakesURLOrURLs() throws {
        let config = try parse(_json: #"{"mqtt":{"urls":["mqtts://node1:8883","mqtts://node2:8883"],"ca":"ca.crt"}}"#)
        let cloud = try XCTUnwrap(config.cloud)
        XCTAssertEqual(cloud.endpoints, [MQTTEndpoint(host: "node1", port: 8883, usesTLS: true), MQTTEndpoint(host: "node2", port: 8883, usesTLS: true)])
        XCTAssertEqual(cloud.tls?.caFile, "/etc/opencarkey/ca.crt", "one set of TLS files for every node")
        XCTAssertTrue(config.displayLines(consoleEndpoint: "-", cloud: config.cloud).contains("mqtt.url: mqtts://node1:8883, mqtts://node2:8883"))
        XCTAssertEqual(key(of: #"{"mqtt":{"url":"mqtt://a","urls":["mqtt://b"]}}"#), "mqtt.urls", "not both")
        XCTAssertEqual(key(of: #"{"mqtt":{"urls":"mqtt://a"}}"#), "mqtt.urls", "an array")
        XCTAssertEqual(key(of: #"{"mqtt":{"urls":[]}}"#), "mqtt.urls", "at least one")
        XCTAssertEqual(key(of: #"{"mqtt":{"urls":["mqtt://a",7]}}"#), "mqtt.urls[1]")
        XCTAssertEqual(key(of: #"{"mqtt":{"urls":["mqtt://a","http://b"]}}"#), "mqtt.urls[1]")
        XCTAssertEqual(key(of: #"{"mqtt":{"urls":["mqtt://a","mqtt://a"]}}"#), "mqtt.urls", "duplicates")
        XCTAssertEqual(key(of: #"{"mqtt":{"urls":["mqtt://a","mqtts://b"],"ca":"x"}}"#), "mqtt.urls", "mixed schemes")
        XCTAssertEqual(key(of: #"{"mqtt":{"ca":"x"}}"#), "mqtt.url", "one of them is required")
    }
}

extension CloudConfigTests {
    /// A car started with --mqtt and a config file without "mqtt": the console's `config` shows
    /// the link it runs, once, and never "offline" beside it.
    func testTheConsoleShowsTheCloudLinkInForceOnce() throws {
        let file = try parse(_json: #"{"logLevel":"info"}"#)
        let flags = try ArgumentParser(options: CloudOptions.optionSpecs).parse(["--mqtt", "mqtt://127.0.0.1:1883", "--mqtt-keepalive", "60"])
        let inForce = try CloudOptions.parse(flags, file: file.cloud)
        let lines = file.displayLines(consoleEndpoint: "-", cloud: inForce)
        XCTAssertEqual(lines.filter { $0.hasPrefix("mqtt") }, ["mqtt.url: mqtt://127.0.0.1:1883", "mqtt.ca / cert / key: -",
                                                               "mqtt.keepaliveSeconds: 60", "mqtt.willDelaySeconds: 10"])
        XCTAssertFalse(lines.contains { $0.contains("offline") }, "\(lines)")
        XCTAssertEqual(file.displayLines(consoleEndpoint: "-", cloud: nil).filter { $0.hasPrefix("mqtt") }, ["mqtt.url: none (the car runs offline)"])
    }
}
