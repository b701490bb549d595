// scripts/deps.sh and the Makefile's use of it: `make build` and `make run` install only what
// building and the demo need; the brokers, VM lanes, kernel source, packaging and aarch64 tools
// come with `make deps` (and so `make test`). Read through `--list`, which installs nothing.
import XCTest

final class DepsScriptTests: XCTestCase {
    private static var root: String { Subprocess.repositoryRoot }

    private func list(_ arguments: [String]) throws -> [String] {
        let result = try Subprocess.run(Self.root + "/scripts/deps.sh", arguments + ["--list"])
        XCTAssertEqual(result.status, 0, result.stderr)
        return result.stdout.split(separator: "\n").map(String.init)
    }

    private static let testOnly = ["mosquitto", "ejabberd", "swtpm", "softhsm2", "linux-image-amd64", "qemu-system-x86",
                                   "linux-source-6.1", "linux-headers-amd64", "lintian", "debootstrap", "qemu-user-static",
                                   "bluez-test-tools", "python3-venv", "qemu-system-arm", "gcc-aarch64-linux-gnu"]

    func testTheBuildSetHasTheLibrariesAndNothingTheTestsAlonePull() throws {
        let build = try list(["--build"])
        for package in ["libssl-dev", "libmosquitto-dev", "libgpiod-dev", "libbluetooth-dev", "libsqlite3-dev", "pkg-config"] {
            XCTAssertTrue(build.contains(package), "\(package) in the build set: \(build)")
        }
        for package in Self.testOnly {
            XCTAssertFalse(build.contains(package), "\(package) is not needed to build or run the demo")
        }
        let all = try list([])
        XCTAssertTrue(Set(build).isSubset(of: Set(all)), "make deps installs the build set too")
        for package in Self.testOnly {
            XCTAssertTrue(all.contains(package), "\(package) in make deps")
        }
    }

    func testMakeRunAndBuildTakeTheBuildSetAndMakeTestTheWholeOne() throws {
        for (target, expected) in [("run", "scripts/deps.sh --build"), ("build", "scripts/deps.sh --build"), ("test", "scripts/deps.sh\n")] {
            let dry = try Subprocess.run("/usr/bin/make", ["-C", Self.root, "-n", target])
            XCTAssertEqual(dry.status, 0, dry.stderr)
            XCTAssertTrue(dry.stdout.contains(expected), "make \(target): \(dry.stdout.prefix(400))")
        }
        let run = try Subprocess.run("/usr/bin/make", ["-C", Self.root, "-n", "run"])
        XCTAssertFalse(run.stdout.contains("scripts/deps.sh\n"), "make run does not install the test set")
    }
}
