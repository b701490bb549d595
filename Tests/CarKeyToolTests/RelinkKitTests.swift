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

    // MARK: aarch64

    /// The cross build's chroot, scratch path and binaries (make static-aarch64), or a skip (a
    /// failure under CARKEY_REQUIRE_AARCH64=1).
    private static var crossChroot: String {
        (getenv("OPENCARKEY_AARCH64_CACHE").map { String(cString: $0) } ?? "/var/cache/opencarkey-aarch64") + "/amd64"
    }
    private static let sysroot = "/ock/sdk/opencarkey-trixie-aarch64.artifactbundle/opencarkey-trixie-aarch64/aarch64-unknown-linux-gnu/sysroot"

    /// The aarch64 kit, unpacked inside the chroot (its /tmp), where the cross toolchain is.
    private func aarch64Kit() throws -> (inside: String, here: String) {
        let binaries = Self.root + "/build/aarch64"
        let scratch = Self.crossChroot + "/ock/scratch-gpiod-v1"
        for file in [binaries + "/carkey-agent", binaries + "/carkey", scratch + "/release.yaml", "/usr/bin/qemu-aarch64-static"]
        where access(file, R_OK) != 0 {
            if getenv("CARKEY_REQUIRE_AARCH64").map({ String(cString: $0) }) == "1" { XCTFail("CARKEY_REQUIRE_AARCH64=1 but \(file) is missing") }
            throw XCTSkip("no \(file): run `make static-aarch64`")
        }
        let inside = "/tmp/relink-kit-test-\(getpid())"
        let here = Self.crossChroot + inside
        Subprocess.removeTree(here)
        try FileManager.default.createDirectory(atPath: here, withIntermediateDirectories: true)
        addTeardownBlock { Subprocess.removeTree(here) }
        let made = try Subprocess.run(Self.root + "/scripts/licensing/relink-kit.sh",
                                      ["--chroot", Self.crossChroot, "--scratch", scratch, "--binaries", binaries,
                                       "--out", here + "/kit.tar.gz"])
        XCTAssertEqual(made.status, 0, made.stderr)
        let unpacked = try Subprocess.run("/bin/tar", ["-xzf", here + "/kit.tar.gz", "-C", here])
        XCTAssertEqual(unpacked.status, 0, unpacked.stderr)
        return (inside + "/kit", here + "/kit")
    }

    /// Runs a command in the chroot (scripts/aarch64/in-chroot.sh).
    private func inChroot(_ arguments: [String]) throws -> ProcessResult {
        try Subprocess.run(Self.root + "/scripts/aarch64/in-chroot.sh", arguments)
    }

    func testTheAarch64KitLinksTheReleasedAgentAgainByteForByte() throws {
        let kit = try aarch64Kit()
        XCTAssertTrue(try Subprocess.read(kit.here + "/README").contains("(aarch64)"))
        for library in ["libgpiod.a", "libmosquitto.a", "libssl.a", "libcrypto.a", "libsqlite3.a"] {
            XCTAssertEqual(access(kit.here + "/lib/" + library, R_OK), 0, "the kit carries \(library)")
        }
        let refused = try inChroot([kit.inside + "/link.sh", "--swiftc", "/usr/bin/swiftc", kit.inside + "/../out", "carkey-agent"])
        XCTAssertEqual(refused.status, 2, "an aarch64 kit without --sdk")
        XCTAssertTrue(refused.stderr.contains("--sdk names the SDK's sysroot"), refused.stderr)

        let link = try inChroot([kit.inside + "/link.sh", "--swiftc", "/usr/bin/swiftc", "--sdk", Self.sysroot, kit.inside + "/../out", "carkey-agent"])
        XCTAssertEqual(link.status, 0, link.stdout + link.stderr)
        let relinked = kit.here + "/../out/carkey-agent"
        let compare = try Subprocess.run("/usr/bin/cmp", [relinked, Self.root + "/build/aarch64/carkey-agent"])
        XCTAssertEqual(compare.status, 0, "the relinked aarch64 agent differs from build/aarch64's: \(compare.stdout)")
        let version = try Subprocess.run("/usr/bin/qemu-aarch64-static", [relinked, "--version"])
        XCTAssertTrue(version.stdout.hasPrefix("carkey-agent "), version.stdout + version.stderr)
    }

    /// A user's aarch64 libgpiod with its version string changed, compiled with the chroot's
    /// clang: the relinked agent carries it and runs its crypto self-test under qemu.
    func testTheAarch64KitLinksAgainstAModifiedLibgpiod() throws {
        let kit = try aarch64Kit()
        let marker = "aarch64-libgpiod-modified-by-its-user"
        let gpiod = (kit.inside as NSString).deletingLastPathComponent + "/gpiod"
        let build = """
            set -e; mkdir -p "$1"; cd "$1"; cp "$2/lib/libgpiod.a" .
            printf 'const char *gpiod_version_string(void) { return "%s"; }\\n' "$3" > misc.c
            /usr/libexec/swift/bin/clang --target=aarch64-unknown-linux-gnu -c -O2 -o libgpiod_la-misc.o misc.c
            aarch64-linux-gnu-ar r libgpiod.a libgpiod_la-misc.o
            """
        let made = try inChroot(["/bin/bash", "-c", build, "gpiod", gpiod, kit.inside, marker])
        XCTAssertEqual(made.status, 0, made.stderr)
        let link = try inChroot([kit.inside + "/link.sh", "--swiftc", "/usr/bin/swiftc", "--sdk", Self.sysroot,
                                 "--gpiod-lib", gpiod, kit.inside + "/../modified", "carkey-agent"])
        XCTAssertEqual(link.status, 0, link.stdout + link.stderr)
        let agent = kit.here + "/../modified/carkey-agent"
        XCTAssertEqual(try Subprocess.run("/bin/grep", ["-qF", marker, agent]).status, 0, "the modified libgpiod is in the binary")
        XCTAssertTrue(try Subprocess.read(kit.here + "/../modified/carkey-agent.map").contains(gpiod + "/libgpiod.a(libgpiod_la-misc.o)"))
        let demo = try Subprocess.run("/usr/bin/qemu-aarch64-static", [agent, "demo"])
        XCTAssertEqual(demo.status, 0, demo.stderr)
        XCTAssertTrue(demo.stdout.contains(" 0 failed"), demo.stdout)
    }
}
