// MemoryParts (Tests/Harness): an smaps text of an idle static agent (the sizes are those a
// release agent with --mqtt showed on 2026-12-06; the layout is glibc's, see MemoryParts.classify), with its executable, a
// glibc malloc arena and its reservation, a thread stack above its guard page, the brk heap,
// SQLite's -shm mapping and the vdso, each counted in its part; and a live sample of this
// process whose parts add up to its smaps_rollup.
#if canImport(Glibc)
import Glibc
#endif
import XCTest
import TestHarness

final class MemoryPartsTests: XCTestCase {
    private static let agent = "/usr/bin/carkey-agent"

    private static func mapping(_ range: String, _ permissions: String, _ path: String, rss: Int, anonymous: Int = 0,
                                dirty: Int = 0, referenced: Int = 0) -> String {
        "\(range) \(permissions) 00000000 00:00 0          \(path)\n"
            + "Size:               4 kB\nRss:            \(rss) kB\nPss:            \(rss) kB\n"
            + "Private_Dirty:  \(dirty) kB\nReferenced:     \(referenced) kB\nAnonymous:      \(anonymous) kB\n"
            + "VmFlags: rd wr mr mw me ac\n"
    }

    private static let smaps = [
        mapping("00400000-010f1000", "r-xp", agent, rss: 9436, referenced: 868),
        mapping("010f1000-01184000", "r--p", agent, rss: 588, anonymous: 8, dirty: 8, referenced: 72),
        mapping("01184000-01399000", "rw-p", agent, rss: 1264, anonymous: 88, dirty: 88, referenced: 128),
        mapping("01399000-013e7000", "rw-p", "", rss: 188, anonymous: 188, dirty: 188, referenced: 48),
        mapping("02a5d000-02b62000", "rw-p", "[heap]", rss: 964, anonymous: 964, dirty: 964, referenced: 196),
        mapping("7f0000000000-7f0000021000", "rw-p", "", rss: 112, anonymous: 112, dirty: 112, referenced: 4),
        mapping("7f0000021000-7f0004000000", "---p", "", rss: 0),
        mapping("7f0004000000-7f0004001000", "---p", "", rss: 0),
        mapping("7f0004001000-7f0004801000", "rw-p", "", rss: 24, anonymous: 24, dirty: 24),
        mapping("7f0004801000-7f0004809000", "rw-s", "/var/lib/opencarkey/carkey.db-shm", rss: 32, dirty: 32, referenced: 4),
        mapping("7ffc00000000-7ffc00021000", "rw-p", "[stack]", rss: 32, anonymous: 32, dirty: 32, referenced: 12),
        mapping("7ffc00100000-7ffc00102000", "r-xp", "[vdso]", rss: 4, referenced: 4),
    ].joined()

    func testEachMappingIsCountedInItsPart() {
        let parts = MemoryParts.parts(smaps: Self.smaps, executable: Self.agent)
        let byName = Dictionary(uniqueKeysWithValues: parts.map { ($0.name, $0) })
        XCTAssertEqual(parts.map(\.name), ["code", "rodata", "data", "heap", "malloc-arenas", "thread-stacks", "main-stack",
                                           "other-anonymous", "shared-files", "kernel"])
        XCTAssertEqual(byName["code"], MemoryPart(name: "code", residentKiB: 9436, anonymousKiB: 0, dirtyKiB: 0, referencedKiB: 868))
        XCTAssertEqual(byName["data"]?.residentKiB, 1264)
        XCTAssertEqual(byName["malloc-arenas"]?.residentKiB, 112, "the arena above its 64 MiB reservation")
        XCTAssertEqual(byName["thread-stacks"]?.residentKiB, 24, "the stack above its 4 KiB guard page")
        XCTAssertEqual(byName["other-anonymous"]?.residentKiB, 188, "the anonymous mapping after the data segment (bss)")
        XCTAssertEqual(byName["shared-files"]?.residentKiB, 32)
        XCTAssertEqual(parts.map(\.residentKiB).reduce(0, +), 12644)
        XCTAssertEqual(parts.map(\.dirtyKiB).reduce(0, +), 1448)
    }

    func testALiveSampleAddsUpToTheRollup() throws {
        let pid = getpid()
        XCTAssertTrue(MemoryParts.clearReferences(pid))
        let parts = try XCTUnwrap(MemoryParts.sample(pid))
        let rollup = try XCTUnwrap(ProcessStats.read("/proc/\(pid)/smaps_rollup"))
        let line = try XCTUnwrap(rollup.split(separator: "\n").first { $0.hasPrefix("Rss:") })
        let total = try XCTUnwrap(Int(line.split(separator: " ")[1]))
        let summed = parts.map(\.residentKiB).reduce(0, +)
        // The two reads are moments apart: a test process's RSS moves a little between them.
        XCTAssertLessThan(abs(summed - total), max(total / 20, 512), "parts \(summed) KiB, rollup \(total) KiB")
        XCTAssertTrue(parts.contains { $0.name == "code" && $0.residentKiB > 0 }, "\(parts)")
    }
}
