// `carkey-bench size` on handwritten excerpts of the three linker map dialects it reads (gold
// and bfd, both "GNU", and lld), run as `make bench` runs it: one JSON line per binary. The
// "binary" is a link to a small stripped system executable (/usr/bin/true, coreutils), so the
// ELF reader sees a real section table without debug sections; the map decides the parts, and
// everything the map does not attribute is `other`.
import XCTest
import Drivers
#if canImport(Glibc)
import Glibc
#endif

final class SizeBreakdownTests: XCTestCase {
    static let strippedELF = "/usr/bin/true"

    /// gold: "Archive member included" and "Discarded input sections" come before the memory map
    /// and must not count; names too long for their column wrap; gold's own pieces ("** fill",
    /// "** eh_frame") belong to the linker; .bss holds no file bytes; .debug_info is stripped.
    static let gold = """
        Archive member included because of file (symbol)

        /usr/lib/x86_64-linux-gnu/libcrypto.a(libcrypto-lib-bn_lib.o)
                                      /s/release/Protocol.build/ECDSA.swift.o (BN_is_negative)

        Discarded input sections

         .text          0x0000000000000000     0x9999 /usr/lib/x86_64-linux-gnu/libcrypto.a(libcrypto-lib-bn_lib.o)

        Memory map

         ** file header
                        0x0000000000400000       0x40

        .text           0x0000000000401000   TEXTSIZE
         .text.unlikely
                        0x0000000000401000        0x9 /usr/lib/x86_64-linux-gnu/libcrypto.a(libcrypto-lib-bss_sock.o)
         .text          0x0000000000401010     0x1000 /usr/lib/x86_64-linux-gnu/libcrypto.a(libcrypto-lib-bn_lib.o)
                        0x0000000000401010                BN_is_negative
         .text          0x0000000000402010      0x200 /usr/lib/x86_64-linux-gnu/libssl.a(libssl-lib-ssl_lib.o)
         .text.$s7Drivers8CarStoreC4openyyKF
                        0x0000000000402210      0x300 /s/x86_64-unknown-linux-gnu/release/Drivers.build/CarStore.swift.o
         .text          0x0000000000402510       0x80 /s/x86_64-unknown-linux-gnu/release/carkey_agent.build/main.swift.o
         ** fill        0x0000000000402590       0x10
         .text          0x00000000004025a0     0x4000 /opt/swift/usr/lib/swift_static/linux/libswiftCore.a(Runtime.cpp.o)
         .text          0x00000000004065a0      0x100 /usr/lib/x86_64-linux-gnu/libm-2.36.a(s_floor.o)
         .text          0x00000000004066a0       0x20 /opt/swift/usr/lib/swift_static/linux/x86_64/swiftrt.o

        .rodata         0x0000000000500000     0x2000
         .rodata        0x0000000000500000     0x1000 /usr/lib/x86_64-linux-gnu/libsqlite3.a(sqlite3.o)
         .rodata        0x0000000000501000      0x400 /opt/swift/usr/lib/swift_static/linux/libFoundationEssentials.a(JSONDecoder.swift.o)
         .rodata        0x0000000000501400      0x100 /opt/swift/usr/lib/swift_static/linux/libswift_RegexParser.a(_RegexParser.o)

        .eh_frame       0x0000000000600000     0x800
         ** eh_frame    0x0000000000600000     0x800

        .data           0x0000000000700000       0x40
         .data          0x0000000000700000       0x40 /usr/lib/x86_64-linux-gnu/libc.a(errno.o)

        .bss            0x0000000000800000    0x10000
         .bss           0x0000000000800000    0x10000 /usr/lib/x86_64-linux-gnu/libc.a(malloc.o)

        .debug_info     0x0000000000000000   0x50000
         .debug_info    0x0000000000000000   0x50000 /s/release/Drivers.build/CarStore.swift.o
        """

    /// bfd: LOAD lines and input-section patterns before the pieces; "*fill*" carries a pattern.
    static let bfd = """
        Memory Configuration

        Name             Origin             Length             Attributes
        *default*        0x0000000000000000 0xffffffffffffffff

        Linker script and memory map

        LOAD /usr/lib/x86_64-linux-gnu/crt1.o
                        0x0000000000400000                PROVIDE (__executable_start = SEGMENT_START ("text-segment", 0x400000))

        .text           0x0000000000401000     0x3000
         *(.text.unlikely .text.*_unlikely .text.unlikely.*)
         .text.unlikely
                        0x0000000000401000       0x30 /usr/lib/x86_64-linux-gnu/libsqlite3.a(sqlite3.o)
         *(.text .stub .text.*)
         .text          0x0000000000401030     0x2000 /b/release/Protocol.build/ECDSA.swift.o
                        0x0000000000401030                $s8Protocol5ECDSAO6verifyF
         *fill*         0x0000000000403030       0x10 90909090
         .text          0x0000000000403040      0x500 /usr/lib/x86_64-linux-gnu/libcrypto.a(bn_lib.o)
        """

    /// lld (LLVM 17+ columns): the column under "Out", "In" or "Symbol" says what a row is.
    static let lld = """
                     VMA              LMA     Size Align Out     In      Symbol
                  200200           200200       20     8 .note.gnu.property
                  200200           200200       20     8         /usr/lib/aarch64-linux-gnu/crt1.o:(.note.gnu.property)
                  210000           210000     6000    16 .text
                  210000           210000      400     4         /usr/lib/aarch64-linux-gnu/libcrypto.a(libcrypto-lib-bn_lib.o):(.text.BN_is_negative)
                  210000           210000        0     1                 BN_is_negative
                  210400           210400     2000     4         /w/.build/aarch64-unknown-linux-gnu/release/Drivers.build/JSONParser.swift.o:(.text)
                  212400           212400     1000     4         /usr/libexec/swift/lib/swift_static/linux/libswiftCore.a(Runtime.cpp.o):(.text)
                  213400           213400      100     4         <internal>:(.text)
                  213500           213500      200     4         /usr/lib/aarch64-linux-gnu/libzstd.a(zstd_common.o):(.text)
                  220000           220000      800     8 .eh_frame_hdr
                  220000           220000      800     1         <internal>:(.eh_frame_hdr)
                  230000           230000     9000    16 .bss
                  230000           230000     9000    16         /usr/lib/aarch64-linux-gnu/libc.a(malloc.o):(.bss)
                       0                0     5000     1 .debug_info
                       0                0     5000     1         /w/.build/aarch64-unknown-linux-gnu/release/Drivers.build/JSONParser.swift.o:(.debug_info)
        """

    private func breakdown(_ map: String) throws -> [String: JSONTree] {
        let folder = Subprocess.makeTemporaryDirectory()
        defer { Subprocess.removeTree(folder) }
        let binary = folder + "/carkey-agent"
        XCTAssertEqual(symlink(Self.strippedELF, binary), 0)
        try Subprocess.write(map + "\n", to: binary + ".map")
        setenv("CARKEY_BENCH_SIZE_BINARIES", binary, 1)
        defer { unsetenv("CARKEY_BENCH_SIZE_BINARIES") }
        let bench = Subprocess.productsDirectory + "/carkey-bench"
        guard access(bench, X_OK) == 0 else { throw XCTSkip("carkey-bench is not built next to the tests (\(bench))") }
        let result = try Subprocess.run(bench, ["size"])
        XCTAssertEqual(result.status, 0, result.stderr)
        let lines = result.stdout.split(separator: "\n")
        XCTAssertEqual(lines.count, 1, result.stdout)
        guard case .object(let fields)? = try? JSONTree.parse(Array((lines.first ?? "").utf8)) else {
            XCTFail("not one JSON object: \(result.stdout)")
            return [:]
        }
        XCTAssertEqual(fields["binary"], .string(binary))
        XCTAssertEqual(fields["map"], .string(binary + ".map"))
        return fields
    }

    private func bytes(_ fields: [String: JSONTree], _ key: String, file: StaticString = #filePath, line: UInt = #line) -> Int64 {
        guard case .integer(let value)? = fields[key] else { XCTFail("no \(key)", file: file, line: line); return -1 }
        return value
    }

    /// Parts plus modules plus other is the file's size, whatever the map says.
    private func checkSum(_ fields: [String: JSONTree], file: StaticString = #filePath, line: UInt = #line) {
        let parts = ["swiftCore", "swiftRuntimeOther", "FoundationEssentials", "StringProcessing", "libcrypto", "libssl", "sqlite",
                     "libc", "cxxRuntime", "compression", "mosquitto", "bluetooth", "gpiod", "linkerGenerated", "project_modules", "other"]
        let sum = parts.map { bytes(fields, $0 + "_bytes", file: file, line: line) }.reduce(0, +)
        XCTAssertEqual(sum, bytes(fields, "total_bytes", file: file, line: line), file: file, line: line)
        XCTAssertEqual(fields["target_bytes"], .integer(15_000_000), file: file, line: line)
    }

    /// The stripped ELF's .text size as binutils' readelf reports it ("0x3a7e").
    private func textSize() throws -> String {
        let result = try Subprocess.run("/usr/bin/readelf", ["-SW", Self.strippedELF])
        for line in result.stdout.split(separator: "\n") {
            let words = line.split(separator: " ")
            if let at = words.firstIndex(of: ".text"), at + 4 < words.count { return "0x" + words[at + 4] }
        }
        throw XCTSkip("readelf printed no .text for \(Self.strippedELF): \(result.stdout) \(result.stderr)")
    }

    func testGoldMap() throws {
        let fields = try breakdown(Self.gold.replacing("TEXTSIZE", with: try textSize()))
        XCTAssertEqual(fields["map_matches_binary"], .bool(true), "the map's .text is the binary's")
        XCTAssertEqual(fields["map_format"], .string("gnu"))
        XCTAssertEqual(fields["arch"], .string("x86_64"))
        XCTAssertEqual(bytes(fields, "libcrypto_bytes"), 0x9 + 0x1000, "the discarded 0x9999 is not counted")
        XCTAssertEqual(bytes(fields, "libssl_bytes"), 0x200)
        XCTAssertEqual(bytes(fields, "module_Drivers_bytes"), 0x300, "a wrapped long section name; .debug_info not counted")
        XCTAssertEqual(bytes(fields, "module_carkey_agent_bytes"), 0x80)
        XCTAssertEqual(bytes(fields, "project_modules_bytes"), 0x380)
        XCTAssertEqual(bytes(fields, "swiftCore_bytes"), 0x4000)
        XCTAssertEqual(bytes(fields, "libc_bytes"), 0x100 + 0x40, "libm-2.36.a is glibc; .bss has no file bytes")
        XCTAssertEqual(bytes(fields, "sqlite_bytes"), 0x1000)
        XCTAssertEqual(bytes(fields, "FoundationEssentials_bytes"), 0x400)
        XCTAssertEqual(bytes(fields, "StringProcessing_bytes"), 0x100)
        XCTAssertEqual(bytes(fields, "linkerGenerated_bytes"), 0x10 + 0x800, "fill and the merged eh_frame")
        checkSum(fields)
    }

    func testBfdMap() throws {
        let fields = try breakdown(Self.bfd)
        XCTAssertEqual(fields["map_format"], .string("gnu"))
        XCTAssertEqual(bytes(fields, "sqlite_bytes"), 0x30)
        XCTAssertEqual(bytes(fields, "module_Protocol_bytes"), 0x2000)
        XCTAssertEqual(bytes(fields, "libcrypto_bytes"), 0x500)
        XCTAssertEqual(bytes(fields, "linkerGenerated_bytes"), 0x10, "*fill* with its pattern")
        checkSum(fields)
    }

    func testLLDMap() throws {
        let fields = try breakdown(Self.lld)
        XCTAssertEqual(fields["map_format"], .string("lld"))
        XCTAssertEqual(fields["map_matches_binary"], .bool(false), "a .text of 0x6000 is another link's")
        XCTAssertEqual(bytes(fields, "libcrypto_bytes"), 0x400)
        XCTAssertEqual(bytes(fields, "module_Drivers_bytes"), 0x2000, "symbols and .debug_info not counted")
        XCTAssertEqual(bytes(fields, "swiftCore_bytes"), 0x1000)
        XCTAssertEqual(bytes(fields, "compression_bytes"), 0x200)
        XCTAssertEqual(bytes(fields, "linkerGenerated_bytes"), 0x100 + 0x800)
        XCTAssertEqual(bytes(fields, "libc_bytes"), 0, ".bss has no file bytes")
        checkSum(fields)
    }

    func testMissingMapOrBinaryIsASkippedLineNotAFailure() throws {
        let folder = Subprocess.makeTemporaryDirectory()
        defer { Subprocess.removeTree(folder) }
        let withoutMap = folder + "/carkey-agent"
        XCTAssertEqual(symlink(Self.strippedELF, withoutMap), 0)
        setenv("CARKEY_BENCH_SIZE_BINARIES", withoutMap + ":" + folder + "/absent", 1)
        defer { unsetenv("CARKEY_BENCH_SIZE_BINARIES") }
        let bench = Subprocess.productsDirectory + "/carkey-bench"
        guard access(bench, X_OK) == 0 else { throw XCTSkip("carkey-bench is not built next to the tests (\(bench))") }
        let result = try Subprocess.run(bench, ["size"])
        XCTAssertEqual(result.status, 0, result.stderr)
        let lines = result.stdout.split(separator: "\n").map { try? JSONTree.parse(Array($0.utf8)) }
        XCTAssertEqual(lines.count, 2, result.stdout)
        for line in lines {
            guard case .object(let fields)? = line else { XCTFail(result.stdout); continue }
            XCTAssertEqual(fields["skipped"], .bool(true), result.stdout)
        }
    }

    func testAGarbageMapFailsLoudly() throws {
        let folder = Subprocess.makeTemporaryDirectory()
        defer { Subprocess.removeTree(folder) }
        let binary = folder + "/carkey-agent"
        XCTAssertEqual(symlink(Self.strippedELF, binary), 0)
        try Subprocess.write("this is not a linker map\n", to: binary + ".map")
        setenv("CARKEY_BENCH_SIZE_BINARIES", binary, 1)
        defer { unsetenv("CARKEY_BENCH_SIZE_BINARIES") }
        let bench = Subprocess.productsDirectory + "/carkey-bench"
        guard access(bench, X_OK) == 0 else { throw XCTSkip("carkey-bench is not built next to the tests (\(bench))") }
        let result = try Subprocess.run(bench, ["size"])
        XCTAssertEqual(result.status, 1)
        XCTAssertTrue(result.stderr.contains("not a GNU or lld linker map"), result.stderr)
    }
}
