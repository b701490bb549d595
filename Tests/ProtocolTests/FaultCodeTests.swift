// The fault table is wire format: numbers, names and the documented remediation must not drift.
import XCTest
@testable import Protocol

final class FaultCodeTests: XCTestCase {
    func testStableNumbers() {
        let expected: [(FaultCode, UInt16)] = [
            (.unknownKey, 1), (.revoked, 2), (.expired, 3), (.notYetValid, 4), (.insufficientPermission, 5),
            (.badSignature, 6), (.unknownChallenge, 7), (.reusedChallenge, 8), (.challengeExpired, 9),
            (.staleTimestamp, 10), (.replayedCounter, 11), (.outOfOrderCounter, 12), (.expiredCommand, 13),
            (.wrongVehicle, 14), (.clockNotTrusted, 15), (.busy, 16), (.rateLimited, 17), (.malformedMessage, 18),
            (.unsupportedVersion, 19), (.lifetimeTooLong, 20), (.keychainFull, 21), (.decryptionFailed, 22),
            (.unexpectedMessage, 23), (.sessionExpired, 24), (.invalidCertificate, 25), (.actuationFailed, 26),
            (.internalError, 27), (.invalidRevocation, 28), (.lastOwnerKey, 29), (.pairingClosed, 30),
            (.wrongPairingCode, 31), (.notInProximity, 32), (.rangingFailed, 33), (.rangingUnsupported, 34),
            (.pairingVersion, 35),
        ]
        XCTAssertEqual(expected.count, FaultCode.allCases.count)
        for (fault, number) in expected { XCTAssertEqual(fault.rawValue, number, fault.name) }
    }

    func testNamesAreUniqueAndRoundTrip() {
        XCTAssertEqual(Set(FaultCode.allCases.map(\.name)).count, FaultCode.allCases.count)
        for fault in FaultCode.allCases {
            XCTAssertEqual(FaultCode(name: fault.name), fault)
            XCTAssertFalse(fault.remediation.isEmpty)
        }
        XCTAssertNil(FaultCode(name: "nope"))
    }

    /// docs/protocol.md carries the same table; every row must match the code.
    func testDocumentedFaultTableMatches() throws {
        let doc = try XCTUnwrap(readRepositoryFile("docs/protocol.md"), "docs/protocol.md missing")
        for fault in FaultCode.allCases {
            let row = "| \(fault.rawValue) | `\(fault.name)` | \(fault.remediation) |"
            XCTAssertTrue(doc.contains(row), "docs/protocol.md lacks the row: \(row)")
        }
    }

    /// An untrusted clock is the usual state of a development machine: the advice names the fix
    /// for a simulated car as well as for a real one.
    func testClockNotTrustedAdviceNamesNTPAndTheSimulatorFlag() {
        let advice = FaultCode.clockNotTrusted.remediation
        XCTAssertTrue(advice.contains("NTP"), advice)
        XCTAssertTrue(advice.contains("--clock-sync yes"), advice)
        XCTAssertTrue(advice.contains("remote command"), "remote commands are refused too: \(advice)")
    }
}
