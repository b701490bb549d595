// A real power cut in the middle of applying: a child process (this test bundle, running only
// `testChildAppliesUntilKilled`) applies documents back to back on real files until it gets
// SIGKILL at a random moment; then the start-up recovery runs and the config file must parse
// and be byte for byte one of the files a finished apply could have left, never a torn one.
import XCTest
import Drivers
import Protocol
import TestHarness
@testable import carkey_agent
#if canImport(Glibc)
import Glibc
#endif

final class ConfigUpdatePowerCutTests: XCTestCase {
    static let childVariable = "OCK_OTA_CRASH_CHILD"
    static let original = #"{"vehicleID": "VIN-OTA-1", "stateDirectory": "state", "logLevel": "info"}"#
    static let levels = ["debug", "warn"]

    /// The two files a finished apply writes (the documents alternate between two log levels).
    static func expectedFiles(folder: String) throws -> Set<String> {
        var out: Set<String> = [original]
        for level in levels {
            var tree = try JSONTree.parseConfig(Array(original.utf8))
            tree = ConfigMerge.merge(current: tree, document: try JSONTree.parseConfig(Array(#"{"logLevel": "\#(level)"}"#.utf8)))
            out.insert(String(decoding: ConfigFileEncoding.encode(tree), as: UTF8.self))
        }
        return out
    }

    func testChildAppliesUntilKilled() throws {
        guard let folder = getenv(Self.childVariable).map({ String(cString: $0) }) else { return }
        let store = try CarStore.open(stateDirectory: folder + "/state")
        let vehicle = try VehicleID("VIN-OTA-1")
        let updater = ConfigUpdater(configPath: folder + "/agent.json", vehicleID: vehicle, signers: ConfigUpdateTests.signers,
                                    store: store, topics: CloudTopics(vehicleID: vehicle.string),
                                    now: { EventTime(seconds: ConfigUpdateTests.now, trusted: true) }, log: AgentLog(prefix: "child"))
        var version: UInt64 = 1
        while true {  // until SIGKILL
            let json = #"{"logLevel": "\#(Self.levels[Int(version % 2)])"}"#
            let document = try SignedConfig.issue(by: ConfigUpdateTests.fleet, vehicleID: vehicle, version: version,
                                                  issuedAt: UInt32(ConfigUpdateTests.now - 10), expiresAt: UInt32(ConfigUpdateTests.now + 3600),
                                                  payload: Array(json.utf8)).encoded()
            _ = updater.handle(document: document, requestID: nil)
            version += 1
        }
    }

    func testKillNineWhileApplyingLeavesOldOrNewConfig() throws {
        guard getenv(Self.childVariable) == nil else { return }
        var interrupted = 0
        for round in 0..<16 {
            let folder = AgentTestSupport.temporaryDirectory()
            defer { AgentTestSupport.removeTree(folder) }
            let path = folder + "/agent.json"
            try Files.writeAtomically(Array(Self.original.utf8), to: path)
            let pid = try spawnChild(folder: folder)
            // Wait until applies are under way, then cut the power at a random moment.
            let clock = SystemClock()
            let deadline = clock.nowMillis() + 20_000
            while (try? Files.mode(of: path + ".last-good")) == nil && clock.nowMillis() < deadline { usleep(2_000) }
            XCTAssertNotNil(try? Files.mode(of: path + ".last-good"), "round \(round): the child never started applying")
            usleep(UInt32.random(in: 0...40_000) + UInt32(round) * 1_000)
            kill(pid, SIGKILL)
            var status: Int32 = 0
            waitpid(pid, &status, 0)
            if (try ConfigRecovery.recoverIfInterrupted(configPath: path)) != nil { interrupted += 1 }
            let text = String(decoding: try Files.read(path), as: UTF8.self)
            XCTAssertTrue(try Self.expectedFiles(folder: folder).contains(text), "round \(round): torn config:\n\(text)")
            XCTAssertNoThrow(try AgentConfig.load(path: path), "round \(round)")
            XCTAssertNil((try? Files.mode(of: path + ".pending")), "round \(round): marker left after recovery")
        }
        print("config power cut: \(interrupted) of 16 kills landed inside an apply")
    }

    private func spawnChild(folder: String) throws -> pid_t {
        let executable = "/proc/self/exe"
        let arguments = [executable, "GatewayAgentTests.ConfigUpdatePowerCutTests/testChildAppliesUntilKilled"]
        var environment = ProcessEnvironment.current.filter { !$0.hasPrefix(Self.childVariable + "=") }
        environment.append("\(Self.childVariable)=\(folder)")
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        // The child's XCTest chatter is not wanted in this test's output.
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, folder + "/child.err", O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        var pid: pid_t = 0
        let argv = arguments.map { strdup($0) } + [nil]
        let envp = environment.map { strdup($0) } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        let result = posix_spawn(&pid, executable, &actions, nil, argv, envp)
        guard result == 0 else { throw Errno(result, "posix_spawn") }
        return pid
    }
}

enum ProcessEnvironment {
    static var current: [String] {
        var out: [String] = []
        var cursor = environ
        while let entry = cursor.pointee { out.append(String(cString: entry)); cursor += 1 }
        return out
    }
}
