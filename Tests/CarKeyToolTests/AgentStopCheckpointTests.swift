// A clean stop leaves carkey.db complete on its own: the store keeps its WAL file between runs
// (its room matters on a full disk), so without the checkpoint at stop the newest rows lived
// only in carkey.db-wal, and the documented backup "stop the agent, copy carkey.db" lost them.
import XCTest
import Drivers
import Protocol
#if canImport(Glibc)
import Glibc
#endif

final class AgentStopCheckpointTests: XCTestCase {
    func testACleanStopLeavesEveryEventInTheMainDatabaseFile() throws {
        let car = AgentHarness()
        try car.start()
        let owner = try car.enrollOwner()
        XCTAssertEqual(try car.phone("unlock", key: owner.path).status, 0)
        let written = try car.events()
        XCTAssertFalse(written.isEmpty)
        XCTAssertEqual(car.stop(), 0)

        // Copy carkey.db alone, as the backup procedure says, and open the copy.
        let copyDir = car.folder + "/copy"
        XCTAssertEqual(mkdir(copyDir, 0o700), 0)
        let copy = copyDir + "/carkey.db"
        try copyFile(car.stateDir + "/carkey.db", to: copy)
        let database = try Database(path: copy, create: false)
        let count = try database.read { try $0.scalar("SELECT COUNT(*) FROM events") }
        XCTAssertEqual(count, .integer(Int64(written.count)), "carkey.db alone holds every event after a clean stop")
    }

    private func copyFile(_ source: String, to target: String) throws {
        guard let input = fopen(source, "rb") else { throw POSIXFailure(code: errno, what: "open \(source)") }
        defer { fclose(input) }
        guard let output = fopen(target, "wb") else { throw POSIXFailure(code: errno, what: "create \(target)") }
        defer { fclose(output) }
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = fread(&buffer, 1, buffer.count, input)
            if n <= 0 { break }
            XCTAssertEqual(fwrite(buffer, 1, n, output), n)
        }
    }
}
