// Opening ttys: raw 8N1 at the configured baud on a real pty slave, and typed errors otherwise.
#if canImport(Glibc)
import Glibc
#endif
import XCTest
@testable import Drivers

final class SerialPortTests: XCTestCase {
    func testOpensRaw8N1AtTheRequestedBaud() throws {
        let pty = try PseudoTerminal.open()
        defer { pty.close() }
        for baud in [115_200, 9_600, 921_600] {
            let port = try SerialPort.open(path: pty.slavePath, baud: baud)
            defer { port.close() }
            var settings = termios()
            XCTAssertEqual(tcgetattr(port.descriptor.rawValue, &settings), 0)
            XCTAssertEqual(cfgetospeed(&settings), SerialPort.speeds[baud])
            XCTAssertEqual(cfgetispeed(&settings), SerialPort.speeds[baud])
            XCTAssertEqual(settings.c_cflag & tcflag_t(CSIZE), tcflag_t(CS8))
            XCTAssertEqual(settings.c_cflag & (tcflag_t(PARENB) | tcflag_t(CSTOPB) | tcflag_t(CRTSCTS)), 0, "no parity, 1 stop bit, no RTS/CTS")
            XCTAssertEqual(settings.c_lflag & (tcflag_t(ICANON) | tcflag_t(ECHO) | tcflag_t(ISIG)), 0, "raw: no line editing, echo or signals")
            XCTAssertEqual(settings.c_iflag & (tcflag_t(IXON) | tcflag_t(IXOFF) | tcflag_t(ICRNL)), 0, "no XON/XOFF, no CR translation")
            XCTAssertEqual(settings.c_oflag & tcflag_t(OPOST), 0)
        }
        XCTAssertEqual(SerialPort.defaultBaud, 115_200)
    }

    func testUnsupportedBaudIsRefusedBeforeOpening() {
        XCTAssertThrowsError(try SerialPort.open(path: "/dev/ttyS0", baud: 12_345)) {
            XCTAssertEqual($0 as? SerialError, .unsupportedBaud(12_345))
        }
    }

    func testMissingDeviceNamesThePath() {
        XCTAssertThrowsError(try SerialPort.open(path: "/dev/ttyNOPE9")) {
            guard case .openFailed(let path, let errno)? = $0 as? SerialError else { return XCTFail("\($0)") }
            XCTAssertEqual(path, "/dev/ttyNOPE9")
            XCTAssertEqual(errno.rawValue, ENOENT)
            XCTAssertTrue("\($0)".hasPrefix("serial /dev/ttyNOPE9: cannot open"), "\($0)")
        }
    }

    func testANonTerminalIsRefused() {
        XCTAssertThrowsError(try SerialPort.open(path: "/dev/null")) {
            XCTAssertEqual($0 as? SerialError, .notATerminal(path: "/dev/null"))
        }
    }
}
