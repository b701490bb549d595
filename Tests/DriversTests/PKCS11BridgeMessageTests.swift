// The bridge's known-answer frames (docs/pkcs11-bridge.md, "Known-answer frames"): the agent's
// request builders produce them byte for byte and its answer parser reads them as named; every
// answer that is cut short, too long or lies about a length is a typed error.
import CPKCS11
@testable import Drivers
import Protocol
import XCTest

final class PKCS11BridgeMessageTests: XCTestCase {
    /// name -> frame, from the doc's vectors block.
    static func vectors() throws -> [String: Bytes] {
        let doc = try String(contentsOfFile: GPIOFixtures.repositoryRoot + "/docs/pkcs11-bridge.md", encoding: .utf8)
        let start = try XCTUnwrap(doc.range(of: "```pkcs11-bridge-vectors\n"))
        let end = try XCTUnwrap(doc.range(of: "```", range: start.upperBound..<doc.endIndex))
        var vectors: [String: Bytes] = [:]
        for line in doc[start.upperBound..<end.lowerBound].split(separator: "\n") {
            let parts = line.split(separator: ":", maxSplits: 1)
            let hex = Array(parts[1].filter { !$0.isWhitespace })
            vectors[String(parts[0])] = stride(from: 0, to: hex.count, by: 2).map { UInt8(String(hex[$0..<$0 + 2]), radix: 16)! }
        }
        XCTAssertEqual(vectors.count, 6)
        return vectors
    }

    /// The body of a whole frame (its length prefix checked).
    private func body(_ frame: Bytes) -> Bytes {
        XCTAssertEqual(Int(frame.prefix(4).reduce(UInt32(0)) { $0 << 8 | UInt32($1) }), frame.count - 4)
        return Array(frame.dropFirst(4))
    }

    func testRequestsAreTheDocumentedBytes() throws {
        let vectors = try Self.vectors()
        XCTAssertEqual(PKCS11BridgeRequest.open(label: "car", pin: Array("1234".utf8)), vectors["open-car-1234"])
        XCTAssertEqual(PKCS11BridgeRequest.find(limit: 8, template: [.ulong(CKA_CLASS, CKO_PRIVATE_KEY)]), vectors["find-private-keys-limit-8"])
        XCTAssertEqual(PKCS11BridgeRequest.sign(Array("abc".utf8), key: 2, mechanism: CKM_ECDSA, maxLength: 64), vectors["sign-ecdsa-key-2-abc"])
    }

    func testAnswersParseAsDocumented() throws {
        let vectors = try Self.vectors()
        let handles = try PKCS11BridgeAnswer.parse(body(try XCTUnwrap(vectors["answer-handles-2-5"])))
        guard case .ok(let payload) = handles else { return XCTFail("\(handles)") }
        XCTAssertEqual(try PKCS11BridgeResult.handles(payload), [2, 5])
        XCTAssertEqual(try PKCS11BridgeAnswer.parse(body(try XCTUnwrap(vectors["answer-login-pin-incorrect"]))),
                       .pkcs11(rv: UInt64(CKR_PIN_INCORRECT), function: "C_Login"))
        XCTAssertEqual(try PKCS11BridgeAnswer.parse(body(try XCTUnwrap(vectors["answer-token-not-found-a"]))),
                       .bridge(.tokenNotFound, detail: "\"a\""))
    }

    /// Every cut of every answer, and each answer with a byte too many, is a typed error.
    func testTruncatedAndOverlongAnswersAreTypedErrors() throws {
        let vectors = try Self.vectors()
        for name in ["answer-login-pin-incorrect", "answer-token-not-found-a"] {
            let answer = body(try XCTUnwrap(vectors[name]))
            for cut in 0..<answer.count {
                XCTAssertThrowsError(try PKCS11BridgeAnswer.parse(Array(answer.prefix(cut))), "\(name) cut at \(cut)")
            }
            XCTAssertThrowsError(try PKCS11BridgeAnswer.parse(answer + [0])) { error in
                XCTAssertEqual(error as? PKCS11BridgeFrameError, .trailingBytes(1), name)
            }
        }
        let handles = Array(body(try XCTUnwrap(vectors["answer-handles-2-5"])).dropFirst())
        for cut in 0..<handles.count {
            XCTAssertThrowsError(try PKCS11BridgeResult.handles(Array(handles.prefix(cut))), "handles cut at \(cut)")
        }
    }

    func testLyingLengthsAndCapsAreTypedErrors() {
        func error(_ body: Bytes) -> PKCS11BridgeFrameError? {
            do { _ = try PKCS11BridgeAnswer.parse(body); return nil } catch { return error }
        }
        XCTAssertEqual(error([]), .frameLength(0))
        XCTAssertEqual(error(Bytes(repeating: 0, count: PKCS11BridgeFrame.maxBody + 1)), .frameLength(PKCS11BridgeFrame.maxBody + 1))
        XCTAssertEqual(error([3]), .unknownCode(3))
        XCTAssertEqual(error([2, 99, 0, 0, 0, 0]), .unknownCode(99))
        // A detail that claims 5 bytes and carries 2; one that claims more than the cap.
        XCTAssertEqual(error([2, 6, 0, 0, 0, 5, 0x41, 0x42]), .truncated)
        XCTAssertEqual(error([2, 6, 0, 0, 0x10, 0x01]), .fieldTooLong(4097))
        // A function name over 64 bytes.
        XCTAssertEqual(error([1] + Bytes(repeating: 0, count: 8) + [0, 0, 0, 65] + Bytes(repeating: 0x41, count: 65)), .fieldTooLong(65))
        // A handle count over the cap, and one the payload does not hold.
        XCTAssertThrowsError(try PKCS11BridgeResult.handles([0, 0, 0, 65])) { XCTAssertEqual($0 as? PKCS11BridgeFrameError, .tooMany(65)) }
        XCTAssertThrowsError(try PKCS11BridgeResult.handles([0, 0, 0, 2] + Bytes(repeating: 0, count: 8))) {
            XCTAssertEqual($0 as? PKCS11BridgeFrameError, .truncated)
        }
        XCTAssertThrowsError(try PKCS11BridgeResult.empty([0])) { XCTAssertEqual($0 as? PKCS11BridgeFrameError, .trailingBytes(1)) }
        XCTAssertThrowsError(try PKCS11BridgeResult.opened([0, 0, 0, 33] + Bytes(repeating: 0x41, count: 33) + [0, 0, 0, 0])) {
            XCTAssertEqual($0 as? PKCS11BridgeFrameError, .fieldTooLong(33))
        }
    }
}
