// The spidev backend's start-up errors (this kernel has no SPI, so only those can run here) and
// the error texts that tell an installer what to change.
import XCTest
@testable import Drivers
#if canImport(Glibc)
import Glibc
#endif

final class SPIDeviceTests: XCTestCase {
    func testMissingDeviceNamesTheConfigLines() {
        let path = SpidevDevice.path(bus: 9, chipSelect: 1)
        XCTAssertEqual(path, "/dev/spidev9.1")
        XCTAssertThrowsError(try SpidevDevice(path: path)) { error in
            XCTAssertEqual(error as? SPIError, .deviceMissing(path: "/dev/spidev9.1"))
            let text = "\(error)"
            for needle in ["dtparam=spi=on", "dtoverlay=spi0-2cs", "spi1-1cs", "board/README.md"] {
                XCTAssertTrue(text.contains(needle), "\(needle) missing from: \(text)")
            }
        }
    }

    func testANodeThatIsNotSpidevRefusesTheModeSetting() {
        XCTAssertThrowsError(try SpidevDevice(path: "/dev/null")) { error in
            guard case .settingRefused(let path, let setting, let errno)? = error as? SPIError else {
                return XCTFail("expected settingRefused, got \(error)")
            }
            XCTAssertEqual(path, "/dev/null")
            XCTAssertEqual(setting, "SPI mode 0 (SPI_IOC_WR_MODE)")
            XCTAssertEqual(errno.rawValue, ENOTTY)
            XCTAssertTrue("\(error)".contains("refused SPI mode 0"), "\(error)")
        }
    }

    func testADirectoryIsAnOpenFailure() {
        XCTAssertThrowsError(try SpidevDevice(path: "/tmp")) { error in
            XCTAssertEqual(error as? SPIError, .openFailed(path: "/tmp", errno: Errno(EISDIR, "open /tmp")))
        }
    }

    func testPermissionDeniedNamesGroupAndUdevRule() throws {
        // As root, a mode-000 file still opens, so EACCES cannot be produced here for real; the
        // mapping from open(2)'s errno is what decides the message, and it is tested directly.
        let mapped = SPIError.opening("/dev/spidev0.0", Errno(EACCES, "open /dev/spidev0.0"))
        XCTAssertEqual(mapped, .permissionDenied(path: "/dev/spidev0.0", errno: Errno(EACCES, "")))
        XCTAssertEqual(SPIError.opening("/dev/spidev0.0", Errno(EPERM, "open")), .permissionDenied(path: "/dev/spidev0.0", errno: Errno(EPERM, "")))
        XCTAssertEqual(SPIError.opening("/dev/spidev0.0", Errno(ENODEV, "open")), .deviceMissing(path: "/dev/spidev0.0"))
        let text = "\(mapped)"
        XCTAssertTrue(text.contains("`spi` group"), text)
        XCTAssertTrue(text.contains(#"SUBSYSTEM=="spidev", GROUP="spi", MODE="0660""#), text)
        if getuid() != 0 {
            let path = "/tmp/ock-spidev-\(getpid())"
            let fd = open(path, O_CREAT | O_WRONLY, 0o000)
            close(fd)
            defer { unlink(path) }
            XCTAssertThrowsError(try SpidevDevice(path: path)) {
                XCTAssertEqual($0 as? SPIError, .permissionDenied(path: path, errno: Errno(EACCES, "")))
            }
        }
    }
}
