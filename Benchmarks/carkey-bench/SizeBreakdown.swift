// `carkey-bench size`: what the shipped binary is made of (issue 13: carkey-agent at most 15 MB
// stripped on aarch64). One line per binary found: build/static/carkey-agent with the GNU map
// `make static` writes beside it, build/aarch64/carkey-agent with the lld map of the aarch64
// build. The total is the stripped file's size; the parts are the bytes the map places in the
// sections that file keeps, by library or project module, and `other` is the rest (ELF headers,
// alignment, small objects), so the parts always add up to the total.
#if canImport(Glibc)
import Glibc
#endif

enum SizeBreakdown {
    /// Issue 13's target for carkey-agent, stripped (decimal megabytes).
    static let targetBytes = 15_000_000

    /// The parts reported besides the project's modules, in output order.
    static let parts = ["swiftCore", "swiftRuntimeOther", "FoundationEssentials", "StringProcessing", "libcrypto", "libssl",
                        "sqlite", "libc", "cxxRuntime", "compression", "mosquitto", "bluetooth", "gpiod", "linkerGenerated"]

    /// The part an archive (by file name) belongs to; nil for anything else.
    static func part(ofArchive name: String) -> String? {
        // glibc's static libm is libm-2.36.a behind a linker script named libm.a.
        if name.hasPrefix("libm-") && name.hasSuffix(".a") { return "libc" }
        switch name {
        case "libswiftCore.a": return "swiftCore"
        case "libswift_Concurrency.a", "libswiftSynchronization.a", "libswiftGlibc.a", "libdispatch.a",
             "libBlocksRuntime.a", "libswiftDispatch.a", "libswift_Volatile.a": return "swiftRuntimeOther"
        case "libFoundationEssentials.a", "lib_FoundationCShims.a", "lib_FoundationCollections.a",
             "libFoundationInternationalization.a", "lib_FoundationICU.a": return "FoundationEssentials"
        case "libswift_StringProcessing.a", "libswift_RegexParser.a": return "StringProcessing"
        case "libcrypto.a": return "libcrypto"
        case "libssl.a": return "libssl"
        case "libsqlite3.a": return "sqlite"
        case "libc.a", "libm.a", "libpthread.a", "libdl.a", "librt.a", "libresolv.a", "libutil.a", "libmvec.a",
             "libc_nonshared.a": return "libc"
        case "libstdc++.a", "libgcc.a", "libgcc_eh.a", "libsupc++.a", "libc++.a", "libc++abi.a", "libunwind.a": return "cxxRuntime"
        case "libz.a", "libzstd.a": return "compression"
        case "libmosquitto.a": return "mosquitto"
        case "libbluetooth.a": return "bluetooth"
        case "libgpiod.a": return "gpiod"
        default: return nil
        }
    }

    /// "part" or "module:NAME" for one map file name, or nil (counted as other).
    static func classify(_ file: String) -> String? {
        if file.isEmpty { return "linkerGenerated" }
        if let paren = file.firstIndex(of: "("), file.hasSuffix(")") {
            let archive = file[..<paren].split(separator: "/").last.map(String.init) ?? ""
            return part(ofArchive: archive)
        }
        // SwiftPM's objects: <scratch>/<triple>/release/<Module>.build/<file>.o
        let components = file.split(separator: "/")
        if components.count >= 2, components[components.count - 2].hasSuffix(".build") {
            return "module:" + components[components.count - 2].dropLast(".build".count)
        }
        return nil
    }

    struct Result: Equatable {
        var format: LinkMapFormat
        var machine: String
        var totalBytes: Int
        var parts: [String: Int]
        var modules: [String: Int]
        var otherBytes: Int
        /// The map's .text has the binary's .text size: the map is from this link.
        var mapMatchesBinary: Bool
    }

    /// The breakdown of `binaryPath` (stripped) from `mapText`.
    static func analyse(binaryPath: String, mapText: Substring) throws -> Result {
        var info = stat()
        guard stat(binaryPath, &info) == 0 else { throw ELFReader.Failure(description: "cannot stat \(binaryPath)") }
        let elf = try ELFReader.read(binaryPath)
        let shipped = Set(elf.sections.filter(\.occupiesFile).map(\.name))
        guard let (format, contributions, outputSizes) = LinkMapReader.contributions(mapText, counting: shipped.contains) else {
            throw ELFReader.Failure(description: "not a GNU or lld linker map")
        }
        let text = elf.sections.first { $0.name == ".text" }?.size
        var parts: [String: Int] = [:]
        var modules: [String: Int] = [:]
        var attributed = 0
        for entry in contributions {
            guard let where_ = classify(entry.file) else { continue }
            if where_.hasPrefix("module:") {
                modules[String(where_.dropFirst("module:".count)), default: 0] += entry.bytes
            } else {
                parts[where_, default: 0] += entry.bytes
            }
            attributed += entry.bytes
        }
        let total = Int(info.st_size)
        return Result(format: format, machine: elf.machine, totalBytes: total, parts: parts, modules: modules,
                      otherBytes: total - attributed, mapMatchesBinary: text != nil && outputSizes[".text"] == text)
    }

    // MARK: The benchmark

    /// CARKEY_BENCH_SIZE_BINARIES (colon-separated), or the two static builds under the working
    /// directory (make bench runs from the repository root). Each map is the binary's path + ".map".
    static func binaries() -> [String] {
        if let list = getenv("CARKEY_BENCH_SIZE_BINARIES") {
            return String(cString: list).split(separator: ":").map(String.init)
        }
        var buffer = [CChar](repeating: 0, count: 4096)
        let cwd = getcwd(&buffer, buffer.count) != nil
            ? String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) : "."
        return [cwd + "/build/static/carkey-agent", cwd + "/build/aarch64/carkey-agent"]
    }

    static func run() throws {
        for binary in binaries() {
            let map = binary + ".map"
            guard access(binary, R_OK) == 0 else {
                Bench.emit([("benchmark", "size"), ("binary", binary), ("skipped", true),
                            ("reason", "not built: " + (binary.contains("/aarch64/") ? "make static-aarch64" : "make static"))])
                continue
            }
            guard let text = readFile(map, limit: 512 << 20) else {
                Bench.emit([("benchmark", "size"), ("binary", binary), ("skipped", true),
                            ("reason", "no linker map at \(map) (the build writes it with -Xlinker -Map)")])
                continue
            }
            let result = try analyse(binaryPath: binary, mapText: text[...])
            var fields: [(String, Any)] = [
                ("benchmark", "size"),
                ("binary", binary),
                ("map", map),
                ("map_format", result.format.rawValue),
                // False when the map is left from another link (its .text is not the binary's):
                // then the parts describe that link, not this binary.
                ("map_matches_binary", result.mapMatchesBinary),
                ("arch", result.machine),
                ("total_bytes", result.totalBytes),
                ("total_mib", Double(result.totalBytes) / 1_048_576),
                ("target_bytes", targetBytes),
                ("ratio_to_target", Double(result.totalBytes) / Double(targetBytes)),
                ("meets_target", result.totalBytes <= targetBytes),
            ]
            for part in parts { fields.append((part + "_bytes", result.parts[part] ?? 0)) }
            let projectTotal = result.modules.values.reduce(0, +)
            fields.append(("project_modules_bytes", projectTotal))
            for name in result.modules.keys.sorted() { fields.append(("module_" + name + "_bytes", result.modules[name]!)) }
            fields.append(("other_bytes", result.otherBytes))
            Bench.emit(fields)
        }
    }

    /// The whole file, or nil when it is missing or larger than `limit`.
    static func readFile(_ path: String, limit: Int) -> String? {
        guard let handle = fopen(path, "rb") else { return nil }
        defer { fclose(handle) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = fread(&chunk, 1, chunk.count, handle)
            if count <= 0 { break }
            bytes += chunk[0..<count]
            if bytes.count > limit { return nil }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
