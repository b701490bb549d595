// The "tcti" settings the native client accepts (tpm2-tss's syntax for the two transports it
// speaks) and the character-device transport's framing, checked on a FIFO: what is written
// comes back as the "response", so one write, one poll, one read and the size check run
// without a TPM.
#if canImport(Glibc)
import Glibc
#endif
@testable import Drivers
import Protocol
import TestHarness
import XCTest

final class TPM2TransportTests: XCTestCase {
    func testTCTISettings() {
        XCTAssertEqual(try TPM2TCTI.parse("device").get(), .device(path: "/dev/tpmrm0"))
        XCTAssertEqual(try TPM2TCTI.parse("device:/dev/tpm0").get(), .device(path: "/dev/tpm0"))
        XCTAssertEqual(try TPM2TCTI.parse("swtpm").get(), .swtpm(host: "127.0.0.1", port: 2321))
        XCTAssertEqual(try TPM2TCTI.parse("swtpm:port=2400").get(), .swtpm(host: "127.0.0.1", port: 2400))
        XCTAssertEqual(try TPM2TCTI.parse("swtpm:host=localhost,port=2400").get(), .swtpm(host: "127.0.0.1", port: 2400))
        XCTAssertEqual(try TPM2TCTI.parse("swtpm:host=::1,port=2400").get(), .swtpm(host: "::1", port: 2400))
        for refused in ["device:tpmrm0", "swtpm:host=tpm.example", "swtpm:port=0", "swtpm:port=65535", "swtpm:port=x",
                        "swtpm:colour=blue", "swtpm:host", "mssim:port=2321", "tabrmd", "libtpms", ""] {
            XCTAssertThrowsError(try TPM2TCTI.parse(refused).get(), refused)
        }
        guard case .failure(let tabrmd) = TPM2TCTI.parse("tabrmd:bus_type=session") else { return XCTFail("tabrmd accepted") }
        XCTAssertTrue(tabrmd.detail.contains("device:/dev/tpmrm0"), tabrmd.detail)
    }

    private func fifo() throws -> String {
        let folder = TestFolders.make(prefix: "opencarkey-tpm2-fifo")
        addTeardownBlock { TestFolders.remove(folder) }
        let path = folder + "/tpm"
        XCTAssertEqual(mkfifo(path, 0o600), 0)
        return path
    }

    func testTheDeviceTransportWritesOneCommandAndReadsOneResponse() throws {
        let device = try TPM2DeviceFile(path: try fifo())
        defer { device.close() }
        let startup = Bytes(hex: "80010000000C000001440000")!
        XCTAssertEqual(try device.exchange(startup), startup, "the FIFO echoes: one write, one whole read")
        // A "response" whose size field claims more than arrived.
        let lying = Bytes(hex: "80010000000C00000000")!
        XCTAssertThrowsError(try device.exchange(lying)) { error in
            XCTAssertTrue((error as? TPM2TransportError)?.detail.contains("claims 12") == true, "\(error)")
        }
        let notATPM = Bytes(hex: "474554202F20485454502F312E310D0A")! // "GET / HTTP/1.1"
        XCTAssertThrowsError(try device.exchange(notATPM)) { error in
            XCTAssertTrue((error as? TPM2TransportError)?.detail.contains("not a TPM response") == true, "\(error)")
        }
    }

    func testAMissingDeviceNamesThePath() {
        XCTAssertThrowsError(try TPM2DeviceFile(path: "/nonexistent/tpmrm0")) { error in
            XCTAssertTrue((error as? TPM2TransportError)?.detail.hasPrefix("/nonexistent/tpmrm0: ") == true, "\(error)")
        }
    }
}
