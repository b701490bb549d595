// The bridge's field writer and reader: big-endian integers, length-prefixed bytes and
// templates, a length prefix filled in at the end; reads bounded by the frame and the caps.
@testable import Drivers
import Protocol
import XCTest

final class PKCS11BridgeFrameTests: XCTestCase {
    func testWriterFramesFieldsBigEndianWithTheLengthInFront() {
        var writer = PKCS11BridgeWriter()
        writer.u8(9)
        writer.u32(0x0102_0304)
        writer.u64(0x1122_3344_5566_7788)
        writer.bytes([0xaa, 0xbb])
        writer.template([PKCS11Attribute.bytes(0x102, [0x01])])
        XCTAssertEqual(writer.framed(), [0, 0, 0, 36, 9, 1, 2, 3, 4, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88,
                                         0, 0, 0, 2, 0xaa, 0xbb, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1, 2, 0, 0, 0, 1, 1])
    }

    func testReaderReadsBackAndRefusesWhatTheFrameDoesNotHold() throws {
        var reader = PKCS11BridgeReader([7, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 1, 0x5a])
        XCTAssertEqual(try reader.u8(), 7)
        XCTAssertEqual(try reader.u32(), 1)
        XCTAssertEqual(try reader.u64(), 2)
        XCTAssertEqual(try reader.bytes(), [0x5a])
        XCTAssertNoThrow(try reader.finish())
        XCTAssertThrowsError(try reader.u8()) { XCTAssertEqual($0 as? PKCS11BridgeFrameError, .truncated) }

        var short = PKCS11BridgeReader([0, 0, 1])
        XCTAssertThrowsError(try short.u32()) { XCTAssertEqual($0 as? PKCS11BridgeFrameError, .truncated) }
        var capped = PKCS11BridgeReader([0, 0, 0, 3, 1, 2, 3])
        XCTAssertThrowsError(try capped.bytes(cap: 2)) { XCTAssertEqual($0 as? PKCS11BridgeFrameError, .fieldTooLong(3)) }
        var lying = PKCS11BridgeReader([0xff, 0xff, 0xff, 0xff, 1])
        XCTAssertThrowsError(try lying.bytes()) { XCTAssertEqual($0 as? PKCS11BridgeFrameError, .fieldTooLong(Int(UInt32.max))) }
    }
}
