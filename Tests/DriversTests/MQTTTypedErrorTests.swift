// What the MQTT layer throws is one typed error, MQTTError, with the case saying what failed,
// and a QoS passed as MQTTQoS reaches the broker as that QoS (seen by mosquitto_sub, an
// independent client).
import XCTest
@testable import Drivers
import TestHarness
#if canImport(Glibc)
import Glibc
#endif

final class MQTTTypedErrorTests: XCTestCase {
    func testBadURLsAreBadEndpointErrorsWithTheOldMessages() {
        let cases: [(String, MQTTEndpoint.ParseError, String)] = [
            ("http://broker", .unsupportedScheme("http"), "unsupported scheme 'http' (use mqtt:// or mqtts://)"),
            ("mqtt://:1883", .missingHost, "no host in MQTT URL"),
            ("mqtts://broker:70000", .badPort("70000"), "bad port '70000' (1-65535)"),
            ("mqtt://car:secret@broker", .credentialsInURL, "credentials in the MQTT URL are not supported (use a client certificate)"),
        ]
        for (url, problem, message) in cases {
            do {
                let endpoint = try MQTTEndpoint(url: url)
                XCTFail("\(url) parsed as \(endpoint)")
            } catch {
                // `error` is an MQTTError here: the initializer throws nothing else.
                XCTAssertEqual(error, .badEndpoint(problem), url)
                XCTAssertEqual(error.description, message, url)
                XCTAssertNil(error.mosquittoCode)
            }
        }
    }

    func testAnUnreadableCAFileIsATLSSetupError() throws {
        let endpoint = MQTTEndpoint(host: "127.0.0.1", port: 8883, usesTLS: true)
        let options = MQTTConnectOptions(endpoint: endpoint, clientID: "typed-tls-\(getpid())",
                                         tls: MQTTTLSFiles(caFile: "/nonexistent/opencarkey-ca.pem"))
        do {
            _ = try MosquittoTransport(options: options)
            XCTFail("a transport with a missing CA file was made")
        } catch {
            guard case .tlsSetup(let operation, let code, _) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(operation, "TLS files")
            XCTAssertEqual(code, 3, "MOSQ_ERR_INVAL")
            XCTAssertTrue(error.description.contains("MOSQ_ERR_INVAL"), error.description)
        }
    }

    func testConnectingToAClosedPortNamesTheMosquittoCode() throws {
        let port = try MosquittoBroker.freeLoopbackPort()  // nothing listens there
        let transport = try MosquittoTransport(options: MQTTConnectOptions(
            endpoint: MQTTEndpoint(host: "127.0.0.1", port: port, usesTLS: false), clientID: "typed-closed-\(getpid())"))
        do {
            try transport.connect()
            XCTFail("connected to a closed port")
        } catch {
            guard case .library(let operation, let code, let message) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(operation, "connect to mqtt://127.0.0.1:\(port)")
            XCTAssertEqual(code, 14, "MOSQ_ERR_ERRNO")
            XCTAssertEqual(message, String(cString: strerror(ECONNREFUSED)))
            XCTAssertTrue(error.description.hasPrefix("MQTT error 14 (MOSQ_ERR_ERRNO): connect to"), error.description)
        }
    }

    func testTheMosquittoNamesFollowTheHeader() {
        XCTAssertEqual(MQTTError.mosquittoName(7), "MOSQ_ERR_CONN_LOST")
        XCTAssertEqual(MQTTError.mosquittoName(15), "MOSQ_ERR_EAI")
        XCTAssertEqual(MQTTError.mosquittoName(99), "MOSQ_ERR 99")
        XCTAssertEqual(MQTTError.connectionRefused(reasonCode: 0x87).description, "broker refused the connection (reason 0x87 Not authorized)")
    }

    func testEachQoSReachesTheBrokerAsAsked() throws {
        guard access("/usr/bin/mosquitto_sub", X_OK) == 0 else { throw XCTSkip("mosquitto_sub is not installed") }
        let broker = try MosquittoBroker()
        try broker.start()
        let client = try TestBrokerClient(options: broker.backendOptions(clientID: "typed-qos-\(getpid())", sessionExpirySeconds: 0))
        // Retained, so a subscriber that comes later gets each one at the QoS it was published
        // with (its own subscription asks for 2, the most a message can get).
        for qos in MQTTQoS.allCases {
            try client.publish("typed/qos\(qos.rawValue)", "q", qos: qos, retain: true)
        }
        // A QoS 1 publish acknowledged after them: the broker has taken the QoS 0 one too.
        let fence = try client.publish("typed/fence", "f", qos: .atLeastOnce, retain: true)
        XCTAssertTrue(fence.map { !MQTTReasonCode.isRefusal($0) } ?? false, "PUBACK \(String(describing: fence))")
        let sub = try AgentProcess("/usr/bin/mosquitto_sub", broker.backendCLIArguments + [
            "-V", "mqttv5", "-q", "2", "-t", "typed/+", "-C", "4", "-W", "20", "-F", "%t=%q"])
        defer { _ = sub.stop() }
        XCTAssertTrue(sub.wait(timeoutSeconds: 30) { !sub.isRunning }, "mosquitto_sub got 4 retained messages: \(sub.stdout) \(sub.stderr)")
        let lines = Set(sub.stdout.split(separator: "\n").map(String.init))
        XCTAssertEqual(lines, ["typed/qos0=0", "typed/qos1=1", "typed/qos2=2", "typed/fence=1"], sub.stdout)
    }
}
