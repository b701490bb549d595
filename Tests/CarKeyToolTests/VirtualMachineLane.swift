// Runs one of the VM lanes' run-lane.sh scripts (scripts/ble-vm, scripts/gpio-vm) and checks its
// result lines: exit 2 (prerequisites missing) is a skip with the lane's reason, or a failure
// when the caller requires the lane; every expected scenario must have a `PREFIX: NAME ok` line.
import XCTest

enum VirtualMachineLane {
    static func environment(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }

    /// CI=true (anything but empty, 0 or false): CI installs the lanes' prerequisites.
    static var underCI: Bool { environment("CI").map { !$0.isEmpty && $0 != "0" && $0 != "false" } ?? false }

    /// - prefix: the lane's result-line prefix (`ble-lane`, `gpio-lane`)
    /// - timeLine: a `PREFIX-time: ...` line that must be there, by its start
    /// - required: missing prerequisites fail the test (with requiredBy as the reason)
    static func check(script: String, _ arguments: [String], prefix: String, scenarios: [String],
                      timeLine: String? = nil, required: Bool, requiredBy: String,
                      file: StaticString = #filePath, line: UInt = #line) throws {
        let results = Subprocess.makeTemporaryDirectory()
        let result = try Subprocess.run(Subprocess.repositoryRoot + "/" + script, arguments + ["--results", results])
        // The figures (set-up, boot, per-scenario times) belong in the test log.
        print(result.stdout, terminator: "")
        if result.status == 2 {
            Subprocess.removeTree(results)
            let reason = "\(prefix) prerequisites missing: " + result.stdout.split(separator: "\n").joined(separator: "; ")
            if required { XCTFail("\(requiredBy): \(reason)", file: file, line: line) } else { throw XCTSkip(reason) }
            return
        }
        // The lane's last lines go into every message: CI shows failure messages, not all output.
        let summary = result.stdout.split(separator: "\n").suffix(8).joined(separator: " | ")
        XCTAssertNotEqual(result.status, 3, "the VM set-up failed; logs in \(results): \(summary)", file: file, line: line)
        let lines = result.stdout.split(separator: "\n").map(String.init)
        for scenario in scenarios {
            let found = lines.first { $0.hasPrefix("\(prefix): \(scenario) ") }
            XCTAssertNotNil(found, "no result for \(scenario); logs in \(results): \(summary)", file: file, line: line)
            if let found { XCTAssertTrue(found.hasPrefix("\(prefix): \(scenario) ok"), found, file: file, line: line) }
        }
        if let timeLine {
            XCTAssertTrue(lines.contains { $0.hasPrefix("\(prefix)-time: \(timeLine)") }, result.stdout, file: file, line: line)
        }
        XCTAssertEqual(result.status, 0, "logs in \(results): \(summary)\n\(result.stderr)", file: file, line: line)
        if result.status == 0 { Subprocess.removeTree(results) }
    }
}
