// The board file's optional "uwb" object: defaults, every value checked, errors naming the key.
import XCTest
@testable import Drivers

final class BoardUWBSectionTests: XCTestCase {
    private func board(uwb: String) -> String {
        """
        {
          "name": "t",
          "pulseWidthMillis": 250,
          "outputs": {
            "lock": {"chip": "gpiochip0", "line": 1},
            "unlock": {"chip": "gpiochip0", "line": 2},
            "trunkRelease": {"chip": "gpiochip0", "line": 3}
          },
          "inputs": {
            "doorOpen": {"chip": "gpiochip0", "line": 4},
            "trunkOpen": {"chip": "gpiochip0", "line": 5},
            "pairingButton": {"chip": "gpiochip0", "line": 6},
            "doorHandle": {"chip": "gpiochip0", "line": 7}
          }\(uwb.isEmpty ? "" : ",\n  \"uwb\": " + uwb)
        }
        """
    }

    private func expectError(_ uwb: String, key: String, file: StaticString = #filePath, line: UInt = #line) {
        do {
            _ = try BoardDescription.parse(json: board(uwb: uwb))
            XCTFail("parsed unexpectedly: \(uwb)", file: file, line: line)
        } catch {
            XCTAssertEqual(error.key, key, "\(error)", file: file, line: line)
        }
    }

    func testNoSectionMeansNoModule() throws {
        let parsed = try BoardDescription.parse(json: board(uwb: ""))
        XCTAssertNil(parsed.uwb)
        XCTAssertNotNil(parsed.inputs[.doorHandle], "the passive-entry handle is an optional input")
    }

    func testMinimalSectionGetsDefaults() throws {
        let parsed = try BoardDescription.parse(json: board(uwb: #"{"spidev": "/dev/spidev0.0"}"#))
        XCTAssertEqual(parsed.uwb, BoardUWB(spidev: "/dev/spidev0.0"))
        XCTAssertEqual(parsed.uwb?.channel, 9)
        XCTAssertEqual(parsed.uwb?.stsLength, 64)
        XCTAssertEqual(parsed.uwb?.txAntennaDelay, 16385)
        XCTAssertNil(parsed.uwb?.interrupt, "no IRQ line: the driver polls")
    }

    func testEveryFieldIsRead() throws {
        let parsed = try BoardDescription.parse(json: board(uwb: """
            {"spidev": "/dev/spidev1.2", "interrupt": {"chip": "pinctrl-bcm2711", "line": 25, "activeLow": false},
             "channel": 5, "preambleCode": 11, "stsLength": 128, "txAntennaDelay": 16450, "rxAntennaDelay": 16400,
             "spiHertz": 8000000, "description": "DWM3000 on SPI1 CE2"}
            """))
        let uwb = try XCTUnwrap(parsed.uwb)
        XCTAssertEqual(uwb.spidev, "/dev/spidev1.2")
        XCTAssertEqual(uwb.interrupt?.chip, "pinctrl-bcm2711")
        XCTAssertEqual(uwb.interrupt?.line, 25)
        XCTAssertEqual([uwb.channel, uwb.preambleCode], [5, 11])
        XCTAssertEqual([uwb.stsLength, uwb.txAntennaDelay, uwb.rxAntennaDelay], [128, 16450, 16400])
        XCTAssertEqual(uwb.spiHertz, 8_000_000)
    }

    func testBadValuesNameTheirKey() {
        expectError(#"{}"#, key: "uwb.spidev")
        expectError(#"{"spidev": "spidev0.0"}"#, key: "uwb.spidev")
        expectError(#"{"spidev": "/dev/spidev0.0", "channel": 7}"#, key: "uwb.channel")
        expectError(#"{"spidev": "/dev/spidev0.0", "preambleCode": 3}"#, key: "uwb.preambleCode")
        expectError(#"{"spidev": "/dev/spidev0.0", "stsLength": 60}"#, key: "uwb.stsLength")
        expectError(#"{"spidev": "/dev/spidev0.0", "txAntennaDelay": 70000}"#, key: "uwb.txAntennaDelay")
        expectError(#"{"spidev": "/dev/spidev0.0", "rxAntennaDelay": -1}"#, key: "uwb.rxAntennaDelay")
        expectError(#"{"spidev": "/dev/spidev0.0", "spiHertz": 100000000}"#, key: "uwb.spiHertz")
        expectError(#"{"spidev": "/dev/spidev0.0", "irq": {"chip": "c", "line": 1}}"#, key: "uwb.irq")
        expectError(#"{"spidev": "/dev/spidev0.0", "interrupt": {"chip": "c"}}"#, key: "uwb.interrupt.line")
        expectError(#""spi0""#, key: "uwb")
    }

    func testTheInterruptLineCannotShareAnInputLine() {
        expectError(#"{"spidev": "/dev/spidev0.0", "interrupt": {"chip": "gpiochip0", "line": 7}}"#, key: "uwb.interrupt")
    }
}
