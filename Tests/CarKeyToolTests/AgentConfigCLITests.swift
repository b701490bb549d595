// `carkey-agent run` configuration through the real binary: bad config files and flags are one
// line naming the key or flag (exit 2); a board whose GPIO chip does not exist stops the agent
// at start-up naming the role and chip (exit 1); the shipped example starts a simulated car.
import XCTest
import Drivers
#if canImport(Glibc)
import Glibc
#endif

final class AgentConfigCLITests: XCTestCase {
    private var folder = ""

    override func setUp() { folder = Subprocess.makeTemporaryDirectory() }
    override func tearDown() { Subprocess.removeTree(folder) }

    private static var repositoryRoot: String { Subprocess.repositoryRoot }

    private func run(config json: String, _ extra: [String] = []) throws -> ProcessResult {
        let path = folder + "/agent.json"
        try Subprocess.write(json, to: path)
        return try Subprocess.run("carkey-agent", ["run", "--simulate", "--config", path, "--state-dir", folder + "/state"] + extra)
    }

    func testBadConfigFilesNameTheKey() throws {
        let cases: [(String, String)] = [
            (#"{"vehicleId": "X"}"#, "unknown key 'vehicleId'"),
            (#"{"console": {"tty": "pty", "speed": 9600}}"#, "unknown key 'console.speed'"),
            (#"{"console": {"baud": 1234}}"#, "key 'console.baud': expected one of 9600"),
            (#"{"console": {"tty": "ttyS0"}}"#, "key 'console.tty': expected an absolute device path"),
            (#"{"service": {"pin": "12ab"}}"#, "key 'service.pin': expected a string of 6 to 12 decimal digits"),
            (#"{"service": {"pin": 1234}}"#, "key 'service.pin': expected a string of 6 to 12 decimal digits, found a number"),
            (#"{"service": {"pin": "4938"}}"#, "key 'service.pin': expected a string of 6 to 12 decimal digits"),
            (#"{"service": {"pinEnabled": "no"}}"#, "key 'service.pinEnabled': expected true or false"),
            (#"{"service": {"challengeSeconds": 1}}"#, "key 'service.challengeSeconds': expected an integer from 5 to 600"),
            (#"{"service": {"timeoutSeconds": 5}}"#, "key 'service.timeoutSeconds': expected an integer from 30 to 3600"),
            (#"{"vehicleID": ""}"#, "key 'vehicleID': expected 1 to 32 printable ASCII characters"),
            (#"{"logLevel": "loud"}"#, "key 'logLevel': expected one of"),
            (#"{"board": 7}"#, "key 'board': expected a board file path"),
            (#"{"console": "pty"}"#, "key 'console': expected an object, found a string"),
            (#"{"service": {"pin": "1234"},"#, "not valid JSON"),
        ]
        for (json, expected) in cases {
            let result = try run(config: json)
            XCTAssertEqual(result.status, 2, json)
            XCTAssertTrue(result.stderr.contains(expected), "\(json): \(result.stderr)")
            XCTAssertEqual(result.stderr.filter { $0 == "\n" }.count, 1, "one line: \(result.stderr)")
            XCTAssertFalse(result.stderr.contains("12ab") || result.stderr.contains("1234\"") || result.stderr.contains("4938"), "values are never echoed: \(result.stderr)")
        }
    }

    func testFlagsAreCheckedAndNamed() throws {
        let cases: [([String], String)] = [
            (["--console", "tty"], "'--console'"),
            (["--console-baud", "100"], "'--console-baud'"),
            (["--log-level", "verbose"], "'--log-level'"),
            (["--config", folder + "/missing.json"], "missing.json: cannot be read"),
            (["--board", folder + "/missing.json"], "missing.json"),
        ]
        for (arguments, expected) in cases {
            let result = try Subprocess.run("carkey-agent", ["run", "--simulate", "--state-dir", folder + "/state"] + arguments)
            XCTAssertEqual(result.status, 2, "\(arguments): \(result.stderr)")
            XCTAssertTrue(result.stderr.contains(expected), "\(arguments): \(result.stderr)")
        }
        let noBoard = try Subprocess.run("carkey-agent", ["run", "--state-dir", folder + "/state", "--vehicle-id", "V1"])
        XCTAssertEqual(noBoard.status, 2)
        XCTAssertTrue(noBoard.stderr.contains("'--board' (or 'board' in the config file) is required without '--simulate'"), noBoard.stderr)
    }

    func testBadBoardFileNamesItsKey() throws {
        let board = folder + "/board.json"
        try Subprocess.write(#"{"name": "x", "pulseWidthMillis": 5000, "outputs": {}, "inputs": {}}"#, to: board)
        let result = try Subprocess.run("carkey-agent", ["run", "--simulate", "--state-dir", folder + "/state", "--board", board])
        XCTAssertEqual(result.status, 2)
        XCTAssertTrue(result.stderr.contains("board file \(board): pulseWidthMillis: expected an integer from 10 to 1000"), result.stderr)
    }

    func testMissingGPIOChipStopsTheAgentAtStartUp() throws {
        // Real GPIO (no --simulate) with a chip label no machine has: safe to run on a Pi too.
        let board = String(decoding: try Files.read(Self.repositoryRoot + "/board/raspberrypi5-uwb.json"), as: UTF8.self)
            .split(separator: "pinctrl-rp1", omittingEmptySubsequences: false).joined(separator: "opencarkey-no-such-chip")
        try Subprocess.write(board, to: folder + "/board.json")
        let result = try Subprocess.run("carkey-agent", ["run", "--state-dir", folder + "/state", "--vehicle-id", "OCK-TEST-1",
                                                         "--board", folder + "/board.json", "--console", "none"])
        XCTAssertEqual(result.status, 1, result.stderr)
        XCTAssertTrue(result.stderr.contains("GPIO: lock: GPIO chip with label opencarkey-no-such-chip not found"), result.stderr)
        XCTAssertNil(UnixSocket.inode(of: folder + "/state/ble.sock"), "nothing was served")
    }

    func testTheShippedExampleStartsASimulatedCar() throws {
        let example = Self.repositoryRoot + "/board/agent.example.json"
        let agent = try BackgroundProcess("carkey-agent", ["run", "--simulate", "--config", example, "--state-dir", folder + "/state",
                                                           "--console", "none"])
        XCTAssertTrue(agent.wait(timeoutSeconds: 20) { agent.stderr.contains("listening on") }, agent.stdout + agent.stderr)
        XCTAssertTrue(agent.stderr.contains("GPIO simulated chip, board simulated (\(Self.repositoryRoot)/board/simulated.json)"), agent.stderr)
        XCTAssertTrue(agent.stderr.contains("simulated car OCK-SIM-0001 listening on \(folder)/state/ble.sock"), "--state-dir overrides the file")
        XCTAssertEqual(agent.stop(), 0)
    }
}
