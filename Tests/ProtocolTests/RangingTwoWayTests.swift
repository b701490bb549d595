// DS-TWR and SS-TWR arithmetic against the worked example of the DW3000 notes (section 2):
// 1.5 m, initiator +20 ppm, responder -20 ppm, Db = 900 us, Da = 500 us.
import XCTest
@testable import Protocol

final class RangingTwoWayTests: XCTestCase {
    let ups = UWBTimestamp.unitsPerSecond
    let tof = 1.5 / 299_792_458
    let eA = 20e-6, eB = -20e-6

    /// Intervals as each chip measures them, in DTU.
    var intervals: (ra: Double, rb: Double, da: Double, db: Double) {
        let db = 900e-6, da = 500e-6                      // on the measuring chip's own clock
        let dbTrue = db / (1 + eB), daTrue = da / (1 + eA)
        let ra = (2 * tof + dbTrue) * (1 + eA)
        let rb = (2 * tof + daTrue) * (1 + eB)
        return (ra * ups, rb * ups, da * ups, db * ups)
    }

    func testDoubleSidedWorkedExample() {
        let i = intervals
        let metres = TwoWayRanging.doubleSided(ra: i.ra, rb: i.rb, da: i.da, db: i.db) * UWBTimestamp.metresPerUnit
        XCTAssertEqual(metres, 1.500000, accuracy: 0.0000005)
    }

    func testSingleSidedWorkedExample() {
        let i = intervals
        let uncorrected = TwoWayRanging.singleSided(roundTrip: i.ra, reply: i.db) * UWBTimestamp.metresPerUnit
        // The notes round 6.8963 to 6.895; what matters is the 5.4 m error of 40 ppm x 900 us.
        XCTAssertEqual(uncorrected, 6.895, accuracy: 0.002)
        let ratio = (1 + eA) / (1 + eB) - 1
        let corrected = TwoWayRanging.singleSided(roundTrip: i.ra, reply: i.db, clockOffsetRatio: ratio) * UWBTimestamp.metresPerUnit
        XCTAssertEqual(corrected, 1.50003, accuracy: 0.000005)
    }

    func testUnitsAreDocumented() {
        XCTAssertEqual(1 / ups * 1e12, 15.65, accuracy: 0.005, "1 DTU = 15.65 ps")
        XCTAssertEqual(UWBTimestamp.metresPerUnit * 1000, 4.69, accuracy: 0.005, "1 DTU = 4.69 mm")
        // The DW3000 notes say 319.8; 1.5 m / 4.6917 mm is 319.71.
        XCTAssertEqual(1.5 / UWBTimestamp.metresPerUnit, 319.71, accuracy: 0.01)
    }

    /// The same round computed from raw stamps far from and straddling 2^40 gives the same ToF.
    func testRoundAcrossTheFortyBitWrap() {
        func stamps(initiator: UInt64, responder: UInt64) -> TwoWayRanging.DoubleSided {
            let a = UWBTimestamp(initiator), b = UWBTimestamp(responder)
            return TwoWayRanging.DoubleSided(
                pollTx: a, pollRx: b.adding(units: 320),
                responseTx: b.adding(units: 320 + 57_508_000),
                responseRx: a.adding(units: 640 + 57_508_000),
                finalTx: a.adding(units: 640 + 57_508_000 + 31_949_000),
                finalRx: b.adding(units: 960 + 57_508_000 + 31_949_000))
        }
        let plain = stamps(initiator: 1_000_000, responder: 5_000_000)
        let wrapped = stamps(initiator: UWBTimestamp.modulus - 40_000_000, responder: UWBTimestamp.modulus - 1000)
        XCTAssertEqual(plain.timeOfFlightUnits, 320, accuracy: 1e-6)
        XCTAssertEqual(wrapped.timeOfFlightUnits, plain.timeOfFlightUnits)
        XCTAssertLessThan(wrapped.finalRx.rawValue, wrapped.pollRx.rawValue, "the responder's counter wrapped")
        XCTAssertEqual(wrapped.ra, 640 + 57_508_000)
    }
}
