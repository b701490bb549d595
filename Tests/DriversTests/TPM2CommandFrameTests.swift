// Command encoding and response parsing, byte for byte. Known answers: TPM2_Startup(CLEAR)
// and TPM2_GetCapability as tpm2-tss sends them to swtpm (the trace in the README of
// github.com/marcoguerri/swtpm-ek-extract: "SWTPM_IO_Read" lines), and the layouts of TCG TPM
// 2.0 Library Part 1 §18 written out by hand. Negative cases: every size that lies is a typed
// error and nothing past the input is read.
@testable import Drivers
import Protocol
import XCTest

final class TPM2CommandFrameTests: XCTestCase {
    private func hex(_ text: String) -> Bytes { Bytes(hex: text.replacingOccurrences(of: " ", with: ""))! }

    func testCommandsWithoutSessionsMatchTpm2TssOnTheWire() {
        var startup = TPM2Writer()
        startup.u16(0x0000) // TPM_SU_CLEAR
        XCTAssertEqual(TPM2CommandFrame.encode(code: 0x144, handles: [], auths: [], parameters: startup.bytes),
                       hex("80 01 00 00 00 0C 00 00 01 44 00 00"))
        var capability = TPM2Writer()
        capability.u32(TPM2Capability.tpmProperties)
        capability.u32(0x200)
        capability.u32(0x7F)
        XCTAssertEqual(TPM2CommandFrame.encode(code: TPM2CommandCode.getCapability, handles: [], auths: [], parameters: capability.bytes),
                       hex("80 01 00 00 00 16 00 00 01 7A 00 00 00 06 00 00 02 00 00 00 00 7F"))
    }

    func testAnAuthorizedCommandCarriesTheAreaBetweenHandlesAndParameters() {
        // TPM2_PCR_Extend(PCR 16) with TPM_RS_PW and an empty password (Part 1 §18.7, Part 3 §22.2).
        var digests = TPM2Writer()
        digests.u32(1)
        digests.u16(TPM2Algorithm.sha256)
        digests.raw(Bytes(repeating: 0xAB, count: 32))
        let command = TPM2CommandFrame.encode(code: TPM2CommandCode.pcrExtend, handles: [TPM2Handle.pcr(16)], auths: [.emptyPassword],
                                              parameters: digests.bytes)
        XCTAssertEqual(command, hex("80 02 00 00 00 41 00 00 01 82") // tag SESSIONS, size 65, TPM_CC_PCR_Extend
                       + hex("00 00 00 10") // handle: PCR 16
                       + hex("00 00 00 09 40 00 00 09 00 00 00 00 00") // authorizationSize 9: TPM_RS_PW, nonce 0, attributes 0, hmac 0
                       + hex("00 00 00 01 00 0B") + Bytes(repeating: 0xAB, count: 32))
        let session = TPM2CommandAuth(sessionHandle: 0x0200_0000, nonce: [1, 2], attributes: 0x21, hmac: [9])
        let withSession = TPM2CommandFrame.encode(code: TPM2CommandCode.unseal, handles: [0x8000_0001], auths: [session], parameters: [])
        XCTAssertEqual(withSession, hex("80 02 00 00 00 1E 00 00 01 5E 80 00 00 01 00 00 00 0C 02 00 00 00 00 02 01 02 21 00 01 09"))
    }

    func testThePrimaryTemplateIsTheOneEarlierVersionsSent() {
        // TPM2B_PUBLIC (Part 2 §12.2.5): ECC, SHA-256, fixedTPM|fixedParent|sensitiveDataOrigin|
        // userWithAuth|noDA|restricted|decrypt, no policy, AES-128-CFB, scheme NULL, P-256, kdf
        // NULL, empty unique point. A different byte derives a different primary key.
        XCTAssertEqual(TPM2Templates.primary().sizedBytes,
                       hex("00 1A 00 23 00 0B 00 03 04 72 00 00 00 06 00 80 00 43 00 10 00 03 00 10 00 00 00 00"))
        XCTAssertEqual(TPM2Templates.sealedData(policy: nil).sizedBytes, hex("00 0E 00 08 00 0B 00 00 04 52 00 00 00 10 00 00"))
        var reader = TPM2Reader(Bytes(TPM2Templates.identity().sizedBytes.dropFirst(2)))
        XCTAssertEqual(try TPM2PublicArea.parse(&reader), TPM2Templates.identity())
    }

    // MARK: responses

    func testResponsesParse() throws {
        XCTAssertEqual(try TPM2CommandFrame.decode(hex("80 01 00 00 00 0A 00 00 00 00"), handleCount: 0, sessionCount: 0),
                       TPM2Response(code: 0))
        XCTAssertEqual(try TPM2CommandFrame.decode(hex("80 01 00 00 00 0A 00 00 09 21"), handleCount: 1, sessionCount: 1),
                       TPM2Response(code: TPM2Code.lockout), "an error is the header alone, whatever the command returns")
        // handle, parameterSize 4, one TPM2B parameter, then nonceTPM, attributes, HMAC (Part 1 §18.8).
        let fixed = hex("80 02 00 00 00 1F 00 00 00 00 80 00 00 02 00 00 00 04 00 02 AB CD 00 02 11 22 01 00 02 33 44")
        XCTAssertThrowsError(try TPM2CommandFrame.decode(Bytes(fixed.dropLast()), handleCount: 1, sessionCount: 1), "one byte short")
        XCTAssertThrowsError(try TPM2CommandFrame.decode(fixed, handleCount: 1, sessionCount: 2), "a session missing")
        let frame = try TPM2CommandFrame.decode(fixed, handleCount: 1, sessionCount: 1)
        XCTAssertEqual(frame.handles, [0x8000_0002])
        XCTAssertEqual(frame.parameters, hex("00 02 AB CD"))
        XCTAssertEqual(frame.auths, [TPM2ResponseAuth(nonce: [0x11, 0x22], attributes: 1, hmac: [0x33, 0x44])])
    }

    func testLyingSizesAreTypedErrors() {
        func fails(_ bytes: Bytes, handles: Int = 0, sessions: Int = 0, _ check: (TPM2WireError) -> Bool, line: UInt = #line) {
            do {
                _ = try TPM2CommandFrame.decode(bytes, handleCount: handles, sessionCount: sessions)
                XCTFail("accepted", line: line)
            } catch {
                XCTAssertTrue(check(error), "\(error)", line: line)
            }
        }
        let truncated: (TPM2WireError) -> Bool = { if case .truncated = $0 { return true }; return false }
        fails([], truncated)
        fails(hex("80 01 00 00 00"), truncated)
        fails(hex("80 01 00 00 00 0C 00 00 00 00"), truncated) // claims 12, has 10
        fails(hex("80 01 00 00 00 0A 00 00 00 00 FF"), { $0 == .trailing(count: 1) }) // claims 10, has 11
        fails(hex("C4 00 00 00 00 0A 00 00 00 00"), { if case .unexpected = $0 { return true }; return false })
        // parameterSize says 0x100 with 4 bytes behind it.
        fails(hex("80 02 00 00 00 12 00 00 00 00 00 00 01 00 00 00 00 00"), sessions: 1, truncated)
        // a nonce that claims 0x4000 bytes
        fails(hex("80 02 00 00 00 13 00 00 00 00 00 00 00 00 40 00 00 00 00"), sessions: 1) {
            if case .oversized = $0 { return true }; return false
        }
        // A session expected but the response has none.
        fails(hex("80 01 00 00 00 0A 00 00 00 00"), sessions: 1) { if case .unexpected = $0 { return true }; return false }
        // Larger than any TPM response.
        var huge = hex("80 01 00 00 10 01 00 00 00 00")
        huge += Bytes(repeating: 0, count: 4097 - huge.count)
        fails(huge) { if case .oversized = $0 { return true }; return false }
    }

    func testTheReaderNeverReadsPastItsInput() {
        var reader = TPM2Reader([0x00, 0x05, 1, 2])
        XCTAssertThrowsError(try reader.sized("x", limit: 64)) { error in
            XCTAssertEqual(error as? TPM2WireError, .truncated(offset: 2, needed: 3))
        }
        var limited = TPM2Reader([0x00, 0x03, 1, 2, 3])
        XCTAssertThrowsError(try limited.sized("x", limit: 2)) { error in
            XCTAssertEqual(error as? TPM2WireError, .oversized(what: "x", size: 3, limit: 2))
        }
        var short = TPM2Reader([1, 2, 3])
        XCTAssertThrowsError(try short.u32())
        XCTAssertEqual(try short.u16(), 0x0102, "a failed read consumes nothing")
        XCTAssertThrowsError(try short.raw(-1))
    }

    func testResponseCodesAreDescribedWithWhatTheyReferTo() {
        XCTAssertEqual(TPM2CommandFrame.describe(0x1DF), "TPM response 0x1df: TPM_RC_INTEGRITY (integrity check failed) (parameter 1)")
        XCTAssertEqual(TPM2CommandFrame.describe(0x98E), "TPM response 0x98e: TPM_RC_AUTH_FAIL (authorization failed) (session 1)")
        XCTAssertEqual(TPM2CommandFrame.describe(0x921), "TPM response 0x921: TPM_RC_LOCKOUT")
        XCTAssertEqual(TPM2Code.format1Error(0x98E), TPM2Code.authFail)
        XCTAssertNil(TPM2Code.format1Error(0x921))
    }
}
