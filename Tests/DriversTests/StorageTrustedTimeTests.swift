// The trusted-time high-water mark only moves forward and survives restarts.
import XCTest
@testable import Drivers

final class StorageTrustedTimeTests: StorageTestCase {
    func testTheMarkOnlyMovesForward() throws {
        let store = try openStore()
        XCTAssertNil(try store.trustedTime())
        XCTAssertEqual(try store.advanceTrustedTime(to: 1_700_000_000), 1_700_000_000)
        XCTAssertEqual(try store.advanceTrustedTime(to: 1_600_000_000), 1_700_000_000, "an older time is ignored")
        XCTAssertEqual(try store.advanceTrustedTime(to: 1_700_000_000), 1_700_000_000)
        XCTAssertEqual(try store.advanceTrustedTime(to: 1_700_000_500), 1_700_000_500)
        XCTAssertEqual(try openStore().trustedTime(), 1_700_000_500, "persisted")
    }

    func testAnUpdateBypassingTheAPICannotMoveItBack() throws {
        let store = try openStore()
        try store.advanceTrustedTime(to: 2_000)
        try rawSQL("UPDATE trusted_time SET seconds = 1000")
        XCTAssertEqual(try store.trustedTime(), 2_000)
    }

    func testTheMarkMovesWithTheTransactionItIsPartOf() throws {
        struct Abort: Error {}
        let store = try openStore()
        XCTAssertThrowsError(try store.write { transaction in
            try transaction.advanceTrustedTime(to: 5_000)
            throw Abort()
        })
        XCTAssertNil(try store.trustedTime())
    }
}
