// The cellular bill's idle budget (issue 15): a car that is connected and idle must cost at
// most 100 KB a day of TLS payload at the agent's default keepalive. The agent runs over mqtts://
// with a client certificate, through a byte-counting relay, against mosquitto, with a SHORT
// keepalive so a few exchanges fit in seconds; the bytes of one exchange (PINGREQ + PINGRESP,
// one TLS record each) times the exchanges a day at the default (read from `carkey-agent run
// --help`) is the figure asserted. A byte count, not a timing: the waits only bound the test.
// (`make bench`, `carkey-bench cellular`, reports the whole bill: connect, sessions, headers.)
import XCTest
import TestHarness
#if canImport(Glibc)
import Glibc
#endif

final class CellularBytesTests: XCTestCase {
    static let vehicle = "OCK-CELL-TEST"
    static let budgetBytesPerDay = 100_000
    static let shortKeepalive = 5

    func testIdleBytesPerDayAtTheDefaultKeepaliveFitTheBudget() throws {
        let defaultKeepalive = try Self.defaultKeepalive()
        let broker = try MosquittoBroker(tls: true)
        do {
            try broker.start()
        } catch MosquittoBroker.BrokerError.notInstalled {
            if getenv("CARKEY_REQUIRE_ARTIFACTS").map({ String(cString: $0) }) == "1" { XCTFail("mosquitto is missing"); return }
            throw XCTSkip("mosquitto is not installed")
        }
        defer { broker.stop() }
        let pki = try XCTUnwrap(broker.pki)
        let relay = try ByteCountingRelay(targetPort: broker.port)
        defer { relay.stop() }
        let client = try pki.clientCertificate(commonName: Self.vehicle)
        let folder = TestFolders.make(prefix: "opencarkey-cellular")
        defer { TestFolders.remove(folder) }
        let agent = try AgentProcess("carkey-agent", [
            "run", "--simulate", "--state-dir", folder + "/state", "--clock-sync", "no", "--vehicle-id", Self.vehicle,
            "--mqtt", "mqtts://127.0.0.1:\(relay.port)", "--mqtt-ca", pki.caFile, "--mqtt-cert", client.certificate,
            "--mqtt-key", client.key, "--mqtt-keepalive", String(Self.shortKeepalive),
        ])
        defer { agent.stop() }
        XCTAssertTrue(agent.wait(timeoutSeconds: 30) { agent.stderr.contains("cloud: connected") },
                      "the agent did not connect over TLS through the relay: \(agent.stderrTail)")
        XCTAssertTrue(relay.waitForQuiet(quietSeconds: 1.5, timeoutSeconds: 15), "the connect did not settle")
        let connect = relay.reset()
        XCTAssertEqual(connect.connections, 1)
        XCTAssertGreaterThan(connect.sentByCar, 500, "a TLS handshake with a client certificate went through the relay")

        // Three exchanges (about 15 s at keepalive 5), each checked to be the same size.
        XCTAssertTrue(relay.wait(timeoutSeconds: 40) { $0.sentChunks >= 3 && $0.receivedChunks >= 3 },
                      "fewer than 3 keepalive exchanges in 40 s: \(relay.counts)")
        let chunks = Array(relay.chunks)
        let sent = chunks.filter { $0.direction == .sentByCar }.map(\.bytes)
        let received = chunks.filter { $0.direction == .receivedByCar }.map(\.bytes)
        XCTAssertEqual(Set(sent).count, 1, "idle traffic other than keepalives went out: \(sent)")
        XCTAssertEqual(Set(received).count, 1, "idle traffic other than keepalives came in: \(received)")
        let exchangeBytes = try XCTUnwrap(sent.first) + XCTUnwrap(received.first)
        // An MQTT PINGREQ/PINGRESP is 2 bytes; in a TLS 1.2 AES-GCM record it is 2 + 29.
        XCTAssertGreaterThan(exchangeBytes, 4, "the pings went through TLS")
        XCTAssertEqual(relay.counts.connections, 0, "no reconnect while idle")

        let perDay = 86_400 / defaultKeepalive * exchangeBytes
        // Reported, not asserted: IPv4+TCP headers, ~3 packets of 52 bytes an exchange (an estimate).
        let withHeaders = 86_400 / defaultKeepalive * (exchangeBytes + 3 * 52)
        print("cellular: keepalive exchange \(sent[0]) B sent + \(received[0]) B received (TLS payload); "
              + "at the default keepalive \(defaultKeepalive) s: \(perDay) B/day (budget \(Self.budgetBytesPerDay)), "
              + "~\(withHeaders) B/day with estimated IPv4+TCP headers; connect \(connect.sentByCar) B sent + "
              + "\(connect.receivedByCar) B received")
        XCTAssertLessThanOrEqual(perDay, Self.budgetBytesPerDay,
                                 "idle TLS payload at the default keepalive \(defaultKeepalive) s: \(perDay) B/day "
                                 + "(\(exchangeBytes) B an exchange) is over the 100 KB/day budget")
    }

    /// "MQTT keepalive (default N)" from `carkey-agent run --help`: the agent's own constant.
    static func defaultKeepalive() throws -> Int {
        let help = try Subprocess.run("carkey-agent", ["run", "--help"])
        let text = help.stdout + help.stderr
        guard let range = text.range(of: "MQTT keepalive (default ") else {
            XCTFail("no keepalive default in `carkey-agent run --help`: \(text)")
            throw XCTSkip("no default keepalive")
        }
        let value = Int(text[range.upperBound...].prefix { $0.isNumber })
        return try XCTUnwrap(value.flatMap { $0 > 0 ? $0 : nil }, "unreadable keepalive default in --help")
    }
}
