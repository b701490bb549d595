// The relink kit (scripts/licensing/relink-kit.sh): libgpiod and glibc are LGPL and linked
// statically, so each release ships the project's objects and the link line. Checked the way a
// user would use it: unpack, link, run. Needs the static build (build/static) and the objects
// and manifest of the SwiftPM scratch path it was built in (.build, or CARKEY_RELINK_SCRATCH);
// without them the tests skip, unless CARKEY_REQUIRE_ARTIFACTS=1 makes that a failure.
import XCTest
#if canImport(Glibc)
import Glibc
#endif

final class RelinkKitTests: XCTestCase {
    private static var root: String { Subprocess.repositoryRoot }
    private static var binaries: String { root + "/build/static" }
    private static var scratch: String { getenv("CARKEY_RELINK_SCRATCH").map { String(cString: $0) } ?? root + "/.build" }
    private static var required: Bool { getenv("CARKEY_REQUIRE_ARTIFACTS").map { String(cString: $0) } == "1" }

    /// The kit, made and unpacked once for the class: its folder, or why not.
    private static let kit: Result<String, KitUnavailable> = makeKit()
    private nonisolated(unsafe) static var kitMade = false

    private struct KitUnavailable: Error { let reason: String; let skip: Bool }

    override class func tearDown() {
        if kitMade, case .success(let folder) = kit { Subprocess.removeTree((folder as NSString).deletingLastPathComponent) }
        super.tearDown()
    }

    private static func makeKit() -> Result<String, KitUnavailable> {
        for file in [binaries + "/carkey-agent", binaries + "/carkey", scratch + "/release.yaml"] where access(file, R_OK) != 0 {
            return .failure(KitUnavailable(reason: "no \(file): run `make static`", skip: true))
        }
        let folder = Subprocess.makeTemporaryDirectory()
        let tarball = folder + "/test-relink-kit.tar.gz"
        do {
            let made = try Subprocess.run(root + "/scripts/licensing/relink-kit.sh",
                                          ["--scratch", scratch, "--binaries", binaries, "--out", tarball])
            guard made.status == 0 else { return .failure(KitUnavailable(reason: made.stderr, skip: false)) }
            let unpacked = try Subprocess.run("/bin/tar", ["-xzf", tarball, "-C", folder])
            guard unpacked.status == 0 else { return .failure(KitUnavailable(reason: unpacked.stderr, skip: false)) }
            return .success(folder + "/test-relink-kit")
        } catch {
            return .failure(KitUnavailable(reason: "\(error)", skip: false))
        }
    }

    private func kit() throws -> String {
        Self.kitMade = true
        switch Self.kit {
        case .success(let folder): return folder
        case .failure(let why):
            if why.skip && !Self.required { throw XCTSkip(why.reason) }
            XCTFail(why.reason)
            throw why
        }
    }

    /// `--version` and the crypto self-test, then a simulated car that answers `status`.
    private func assertWorks(_ agent: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let version = try Subprocess.run(agent, ["--version"])
        XCTAssertTrue(version.stdout.hasPrefix("carkey-agent "), version.stdout + version.stderr, file: file, line: line)
        let demo = try Subprocess.run(agent, ["demo"])
        XCTAssertEqual(demo.status, 0, demo.stderr, file: file, line: line)
        XCTAssertTrue(demo.stdout.contains(" 0 failed"), demo.stdout, file: file, line: line)
        let script = """
            set -e; d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
            "$1" run --simulate --clock-sync yes --console none --state-dir "$d" 2>"$d/agent.log" & pid=$!
            status=0; "$1" status --state-dir "$d" --wait 10 || status=$?
            kill "$pid"; wait "$pid" || true; exit $status
            """
        let car = try Subprocess.run("/bin/bash", ["-c", script, "simulated-car", agent])
        XCTAssertEqual(car.status, 0, car.stdout + car.stderr, file: file, line: line)
        XCTAssertTrue(car.stdout.contains("OCK-SIM"), car.stdout, file: file, line: line)
    }

    func testTheKitLinksTheReleasedAgentAgainByteForByte() throws {
        let kit = try kit()
        let out = Subprocess.makeTemporaryDirectory()
        defer { Subprocess.removeTree(out) }
        let link = try Subprocess.run(kit + "/link.sh", [out, "carkey-agent"])
        XCTAssertEqual(link.status, 0, link.stdout + link.stderr)
        let compare = try Subprocess.run("/usr/bin/cmp", [out + "/carkey-agent", Self.binaries + "/carkey-agent"])
        XCTAssertEqual(compare.status, 0, "the relinked agent differs from build/static's: \(compare.stdout)")
        try assertWorks(out + "/carkey-agent")
    }

    /// A user's libgpiod with its version string changed: the relinked agent carries it, runs,
    /// and its map names the user's archive; the system-libgpiod link does not carry it.
    func testTheKitLinksAgainstAModifiedLibgpiod() throws {
        let kit = try kit()
        let folder = Subprocess.makeTemporaryDirectory()
        defer { Subprocess.removeTree(folder) }
        let marker = "libgpiod-modified-by-its-user"
        let build = """
            set -e; mkdir -p "$1/gpiod"; cd "$1/gpiod"; cp /usr/lib/x86_64-linux-gnu/libgpiod.a .
            printf 'const char *gpiod_version_string(void) { return "%s"; }\\n' "$2" > misc.c
            cc -c -O2 -o libgpiod_la-misc.o misc.c; ar r libgpiod.a libgpiod_la-misc.o
            """
        let made = try Subprocess.run("/bin/bash", ["-c", build, "gpiod", folder, marker])
        XCTAssertEqual(made.status, 0, made.stderr)
        let link = try Subprocess.run(kit + "/link.sh", ["--gpiod-lib", folder + "/gpiod", folder + "/out", "carkey-agent"])
        XCTAssertEqual(link.status, 0, link.stdout + link.stderr)
        let agent = folder + "/out/carkey-agent"
        XCTAssertEqual(try Subprocess.run("/bin/grep", ["-qF", marker, agent]).status, 0, "the modified libgpiod is in the binary")
        XCTAssertEqual(try Subprocess.run("/bin/grep", ["-qF", marker, Self.binaries + "/carkey-agent"]).status, 1,
                       "and not in the released one")
        XCTAssertTrue(try Subprocess.read(folder + "/out/carkey-agent.map").contains(folder + "/gpiod/libgpiod.a(libgpiod_la-misc.o)"))
        try assertWorks(agent)
    }

    func testAKitForOtherBinariesThanItsObjectsIsRefused() throws {
        _ = try kit()
        let folder = Subprocess.makeTemporaryDirectory()
        defer { Subprocess.removeTree(folder) }
        for name in ["carkey-agent", "carkey"] {
            XCTAssertEqual(try Subprocess.run("/bin/cp", ["/bin/true", folder + "/" + name]).status, 0)
        }
        let result = try Subprocess.run(Self.root + "/scripts/licensing/relink-kit.sh",
                                        ["--scratch", Self.scratch, "--binaries", folder, "--out", folder + "/kit.tar.gz"])
        XCTAssertEqual(result.status, 1)
        XCTAssertTrue(result.stderr.contains("is not the link of \(folder)/carkey-agent"), result.stderr)
        XCTAssertNotEqual(access(folder + "/kit.tar.gz", F_OK), 0, "no kit written")
    }
}
