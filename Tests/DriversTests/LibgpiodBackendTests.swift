// The libgpiod backend without GPIO hardware: which libgpiod API the build picked, and finding
// chips by name and label in a device folder the test makes (the kernel tests are in
// GPIOKernelTests). Runs on the host (v1) and in check-swift60's trixie chroot (v2).
#if canImport(Glibc)
import Glibc
#endif
import XCTest
import TestHarness
@testable import Drivers

final class LibgpiodBackendTests: XCTestCase {
    func testCompiledAPIMatchesTheLinkedLibrary() {
        XCTAssertTrue([1, 2].contains(LibgpiodBackend.apiVersion))
        XCTAssertTrue(LibgpiodBackend.libraryVersion.hasPrefix("\(LibgpiodBackend.apiVersion)."),
                      "libgpiod \(LibgpiodBackend.libraryVersion) under API \(LibgpiodBackend.apiVersion)")
    }

    /// The shim's detection agrees with what pkg-config says is installed (1.6 on Debian 12,
    /// 2.x on Debian 13): the API was not picked by a stale macro or a wrong header.
    func testCompiledAPIMatchesPkgConfig() throws {
        let pkgConfig = ["/usr/bin/pkg-config", "/usr/bin/pkgconf"].first { (path: String) in access(path, X_OK) == 0 }
        guard let pkgConfig else { throw XCTSkip("no pkg-config") }
        let (status, output) = try GPIOKernelLaneTests.run(pkgConfig, ["--modversion", "libgpiod"])
        XCTAssertEqual(status, 0, output)
        XCTAssertEqual(output.split(separator: ".").first.map(String.init), "\(LibgpiodBackend.apiVersion)", output)
    }

    func testChipDevicesAreListedByNumber() throws {
        let folder = TestFolders.make()
        defer { TestFolders.remove(folder) }
        for name in ["gpiochip10", "gpiochip2", "gpiochip0", "gpiochip", "gpiochipX", "gpiochip+1", "ttyS0", "gpiochip1234567890"] {
            XCTAssertEqual(creat(folder + "/" + name, 0o600) >= 0, true)
        }
        XCTAssertEqual(LibgpiodChips.chipDeviceNames(in: folder), ["gpiochip0", "gpiochip2", "gpiochip10"])
        XCTAssertEqual(LibgpiodChips.chipDeviceNames(in: folder + "/absent"), [])
    }

    /// Files that are no GPIO chip (a plain file, a folder, a link to /dev/null) are passed over
    /// by the label search and are "not found" by name, the same on both libgpiod APIs.
    func testNonChipsInTheDeviceFolderAreNotChips() throws {
        let folder = TestFolders.make()
        defer { TestFolders.remove(folder) }
        XCTAssertGreaterThanOrEqual(creat(folder + "/gpiochip0", 0o600), 0)
        XCTAssertEqual(mkdir(folder + "/gpiochip1", 0o700), 0)
        XCTAssertEqual(symlink("/dev/null", folder + "/gpiochip2"), 0)
        let backend = LibgpiodBackend(deviceDirectory: folder)
        XCTAssertThrowsError(try backend.requestOutput(GPIOLineConfig(chip: "pinctrl-rp1", line: 0), role: "lock")) {
            XCTAssertEqual($0 as? GPIOError, .chipNotFound(chip: .label("pinctrl-rp1"), role: "lock"))
        }
        for name in ["gpiochip0", "gpiochip1", "gpiochip2", "gpiochip3"] {
            XCTAssertThrowsError(try backend.requestInput(GPIOLineConfig(chip: name, line: 0), role: "doorOpen"), name) {
                XCTAssertEqual($0 as? GPIOError, .chipNotFound(chip: .name(name), role: "doorOpen"), name)
            }
            XCTAssertThrowsError(try backend.requestInput(GPIOLineConfig(chip: folder + "/" + name, line: 0), role: "doorOpen"), name)
        }
        XCTAssertTrue(LibgpiodChips.isCharacterDevice("/dev/null"))
        XCTAssertFalse(LibgpiodChips.isCharacterDevice(folder + "/gpiochip1"))
    }
}
