// The car-wide handshake budget sized to a device identity's signing time (issue 18): cheap
// signing keeps the standard 200/s, burst 100; a discrete TPM's 30/100/300 ms cut it so one
// burst costs at most a second of the agent loop and the long-run share stays at a quarter.
@testable import carkey_agent
import Protocol
import XCTest

final class VaultSignBudgetTests: XCTestCase {
    private let standard = HandshakeBudget(perSecond: 200, burst: 100)

    func testSoftwareAndSwtpmSigningKeepTheStandardBudget() {
        XCTAssertEqual(VaultSignBudget.carWide(signMillis: 0.08, standard: standard), standard)
        XCTAssertEqual(VaultSignBudget.carWide(signMillis: 0.95, standard: standard), standard, "swtpm, measured 0.95 ms")
        XCTAssertEqual(VaultSignBudget.carWide(signMillis: 0, standard: standard), standard, "below the clock's resolution")
    }

    func testSlowDevicesGetABudgetBoundedByLoopTime() {
        let cases: [(Double, HandshakeBudget)] = [
            (2, HandshakeBudget(perSecond: 125, burst: 100)),
            (30, HandshakeBudget(perSecond: 8, burst: 33)),
            (100, HandshakeBudget(perSecond: 2, burst: 10)),
            (300, HandshakeBudget(perSecond: 1, burst: 3)),
            (5000, HandshakeBudget(perSecond: 1, burst: 1)),
        ]
        for (millis, expected) in cases {
            let budget = VaultSignBudget.carWide(signMillis: millis, standard: standard)
            XCTAssertEqual(budget, expected, "\(millis) ms")
            // A full burst never takes more than a second of loop (or one signature), and the
            // refill rate never more than a quarter of the loop (or one a second).
            XCTAssertLessThanOrEqual(Double(budget.burst) * millis, max(1000, millis))
            XCTAssertLessThanOrEqual(Double(budget.perSecond) * millis, max(250, millis))
        }
    }

    func testMeasureTakesTheMedianOfThreeProbeSignatures() throws {
        let signer = TimedSigner(costs: [400_000, 100_000, 90_000])
        let millis = try VaultSignBudget.measure(signer, nowMicros: { signer.now })
        XCTAssertEqual(millis, 100, "median of 400, 100 and 90 ms")
        XCTAssertEqual(signer.messages, Array(repeating: VaultSignBudget.probeMessage, count: 3))
        let line = VaultSignBudget.startupLine(signMillis: millis, budget: VaultSignBudget.carWide(signMillis: millis, standard: standard),
                                               standard: standard)
        XCTAssertEqual(line, "carkey-agent: key vault: identity signature 100.00 ms (median of 3): car-wide handshake budget cut to 2/s, burst 10 "
                       + "(standard 200/s, burst 100), so handshakes take at most a quarter of the agent loop")
        XCTAssertTrue(VaultSignBudget.startupLine(signMillis: 0.952, budget: standard, standard: standard)
            .hasSuffix("identity signature 0.95 ms (median of 3): car-wide handshake budget 200/s, burst 100 (standard)"))
    }

    func testAFailingDeviceSignatureIsThrownNotTimed() {
        let signer = TimedSigner(costs: [1000], failing: true)
        XCTAssertThrowsError(try VaultSignBudget.measure(signer, nowMicros: { signer.now }))
    }
}

/// A signer whose every signature advances a virtual microsecond clock by the next cost.
private final class TimedSigner: ProtocolSigner, @unchecked Sendable {
    struct Refused: Error {}
    let publicKey: P256PublicKey
    private let key: P256PrivateKey
    private var costs: [UInt64]
    private let failing: Bool
    private(set) var now: UInt64 = 1_000_000
    private(set) var messages: [Bytes] = []

    init(costs: [UInt64], failing: Bool = false) {
        key = try! P256PrivateKey.generate()
        publicKey = key.publicKey
        self.costs = costs
        self.failing = failing
    }

    func signature(for message: Bytes) throws -> ECDSASignature {
        if failing { throw Refused() }
        messages.append(message)
        now += costs.removeFirst()
        return try key.signature(for: message)
    }
}
