// The README's "The cloud, as written" block, run as a reader would, between the simulated car
// before it and the UWB block after it (bash, from a folder with .build/debug and docs/): it
// starts its own mosquitto on loopback (PORT: a free port here), restarts the car with --mqtt and
// the sample config file, and its commands print what their comments say: the unlocks are ok,
// the document is applied, and the live audit check is intact over real events.
import XCTest
import TestHarness

final class ReadmeCloudTests: XCTestCase {
    func testTheCloudBlockRunsAsWritten() throws {
        try requireDevice {
            guard access("/usr/sbin/mosquitto", X_OK) == 0 || access("/usr/bin/mosquitto", X_OK) == 0 else {
                throw HarnessUnavailable("mosquitto is not installed (make deps)")
            }
        }
        let readme = try Subprocess.read(Subprocess.repositoryRoot + "/README.md")
        let car = try ReadmeBlocks.block(after: "A simulated car by hand.", in: readme)
        let cloud = try ReadmeBlocks.block(after: "The cloud, as written.", in: readme)
        let uwb = try ReadmeBlocks.block(after: "With UWB (simulated):", in: readme)
        XCTAssertTrue(cloud.contains("PORT=${PORT:-1883}") && cloud.contains("listener %s 127.0.0.1"), cloud)

        let folder = Subprocess.makeTemporaryDirectory()
        defer { Subprocess.removeTree(folder) }
        let port = try MosquittoBroker.freeLoopbackPort()
        let script = """
            export PATH=/usr/sbin:$PATH PORT=\(port)
            cd \(folder) && mkdir -p .build && ln -s \(Subprocess.productsDirectory) .build/debug && ln -s \(Subprocess.repositoryRoot)/docs docs
            trap '[ -n "$AGENT" ] && kill $AGENT 2>/dev/null; [ -n "$BROKER" ] && kill $BROKER 2>/dev/null; wait' EXIT
            \(car)
            echo "== cloud"
            \(cloud)
            echo "== uwb"
            \(uwb)
            echo "== log"
            cat $DIR/agent.log
            """
        let result = try Subprocess.run("/bin/bash", ["-c", script])
        let out = result.stdout
        XCTAssertEqual(result.status, 0, out + result.stderr)
        let cloudPart = try XCTUnwrap(out.components(separatedBy: "== cloud\n").last?.components(separatedBy: "== uwb\n").first)
        let lines = cloudPart.split(separator: "\n").map(String.init)
        let results = lines.filter { $0.contains(#""type":"command""#) }
        XCTAssertEqual(results.count, 2, cloudPart)
        XCTAssertTrue(results.allSatisfy { $0.contains(#""result":"ok""#) && $0.contains(#""action":"unlock""#) }, "both unlocks ok: \(cloudPart)")
        XCTAssertTrue(lines.contains { $0.contains(#""version":1"#) && $0.contains(#""result":"applied""#) }, cloudPart)
        let checkpoint = try XCTUnwrap(lines.first { $0.hasPrefix("checkpoint seq ") }, cloudPart)
        let seq = checkpoint.split(separator: " ")[2]
        let summary = try XCTUnwrap(lines.last, cloudPart)
        XCTAssertTrue(summary.hasPrefix("intact: ") && summary.hasSuffix("checkpoint(s) valid, covered through seq \(seq)"), summary)
        XCTAssertFalse(summary.hasPrefix("intact: 0 event(s)"), summary)
        XCTAssertTrue(result.stderr.contains("carkey: note: the car sets the managed settings this document leaves out back to their defaults: description,"),
                      result.stderr)
        XCTAssertFalse(result.stderr.contains("remote.allowUnlock"), "desired.json keeps remote unlock: \(result.stderr)")
        let uwbPart = try XCTUnwrap(out.components(separatedBy: "== uwb\n").last?.components(separatedBy: "== log\n").first)
        XCTAssertEqual(uwbPart.split(separator: "\n").filter { $0 == "ok" || $0.hasPrefix("fault: ") },
                       ["fault: notInProximity (32)", "ok", "fault: notInProximity (32)"], "the block after still runs: \(uwbPart)")
        XCTAssertTrue(out.contains("config: version 1 applied"), out)
    }
}
