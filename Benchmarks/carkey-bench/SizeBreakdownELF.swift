// The section table of an ELF64 little-endian file (x86_64 and aarch64 alike): which sections
// occupy bytes in the stripped binary, so the map's output sections can be matched against
// what really ships (.bss takes no file space; .symtab and .debug_* are gone after strip).
#if canImport(Glibc)
import Glibc
#endif

struct ELFSection: Equatable {
    let name: String
    let type: UInt32
    let size: Int
    /// SHT_NOBITS (.bss, .tbss) holds no bytes in the file.
    var occupiesFile: Bool { type != 0 && type != 8 && size > 0 }
}

struct ELFSummary: Equatable {
    let machine: String
    let sections: [ELFSection]
}

enum ELFReader {
    struct Failure: Error, CustomStringConvertible { let description: String }

    static func read(_ path: String) throws -> ELFSummary {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw Failure(description: "cannot open \(path)") }
        defer { close(fd) }
        func bytes(_ offset: Int, _ count: Int) throws -> [UInt8] {
            // Bounded: section tables of our binaries are a few KiB.
            guard count >= 0, count <= 1 << 20, offset >= 0 else { throw Failure(description: "\(path): bad ELF offsets") }
            var buffer = [UInt8](repeating: 0, count: count)
            let got = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, count, off_t(offset)) }
            guard got == count else { throw Failure(description: "\(path): short read") }
            return buffer
        }
        let header = try bytes(0, 64)
        guard header[0..<4] == [0x7F, 0x45, 0x4C, 0x46], header[4] == 2, header[5] == 1 else {
            throw Failure(description: "\(path): not a little-endian ELF64 file")
        }
        let machine: String
        switch le(header, 18, 2) {
        case 62: machine = "x86_64"
        case 183: machine = "aarch64"
        case let other: machine = "e_machine \(other)"
        }
        let tableOffset = le(header, 40, 8)
        let entrySize = le(header, 58, 2)
        let count = le(header, 60, 2)
        let namesIndex = le(header, 62, 2)
        guard entrySize >= 64, count > 0, namesIndex < count else { throw Failure(description: "\(path): no section table") }
        let table = try bytes(tableOffset, entrySize * count)
        let namesEntry = namesIndex * entrySize
        let names = try bytes(le(table, namesEntry + 24, 8), le(table, namesEntry + 32, 8))
        var sections: [ELFSection] = []
        for index in 0..<count {
            let entry = index * entrySize
            let nameOffset = le(table, entry, 4)
            var end = nameOffset
            while end < names.count && names[end] != 0 { end += 1 }
            let name = nameOffset < names.count ? String(decoding: names[nameOffset..<end], as: UTF8.self) : ""
            sections.append(ELFSection(name: name, type: UInt32(le(table, entry + 4, 4)), size: le(table, entry + 32, 8)))
        }
        return ELFSummary(machine: machine, sections: sections)
    }

    /// A little-endian unsigned field, clamped to Int (a corrupt huge value then fails the
    /// bounds checks in `bytes` instead of trapping here).
    private static func le(_ bytes: [UInt8], _ offset: Int, _ width: Int) -> Int {
        var value: UInt64 = 0
        for index in (0..<width).reversed() { value = value << 8 | UInt64(bytes[offset + index]) }
        return Int(clamping: value)
    }
}
