// The non-instrumented smoke: a target over its seed corpus plus deterministic mutations.
// Used by the XCTest smoke and by `carkey-fuzz smoke`.
#if canImport(Glibc)
import Glibc
#endif
import Drivers
import Protocol

public enum SmokeRunner {
    public struct Outcome: Sendable {
        public var executions = 0
        public var accepted = 0
        public var seeds = 0
        public var violation: (input: Bytes, error: PropertyViolation)?
    }

    /// Runs `target` over `seeds` and `mutations` mutants of them (SplitMix64 seeded from the name).
    public static func run(_ target: FuzzTarget, seeds: [Bytes], mutations: Int) -> Outcome {
        var outcome = Outcome()
        outcome.seeds = seeds.count
        var rng = SplitMix64(seed: target.name.utf8.reduce(0x5EED) { ($0 &* 31) &+ UInt64($1) })
        let pool = seeds.isEmpty ? [[]] : seeds
        func one(_ input: Bytes) -> Bool {
            outcome.executions += 1
            do throws(PropertyViolation) {
                if try target.check(input) { outcome.accepted += 1 }
                return true
            } catch {
                outcome.violation = (input, error)
                return false
            }
        }
        for seed in seeds where !one(seed) { return outcome }
        for _ in 0..<mutations {
            let parent = pool[rng.below(pool.count)]
            if !one(Mutator.mutate(parent, &rng)) { return outcome }
        }
        return outcome
    }

    /// Every regular file in `directory`, sorted by name; [] when it is missing.
    public static func loadCorpus(_ directory: String) -> [Bytes] {
        guard let dir = opendir(directory) else { return [] }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            // Read in place: `entry.pointee.d_name` copies all 256 bytes, past the end of a short
            // name's record (ASan: a read past readdir's buffer once a corpus held ~800 files).
            let name = DirectoryEntry.name(entry)
            if !name.hasPrefix(".") { names.append(name) }
        }
        return names.sorted().compactMap { readFile(directory + "/" + $0) }
    }

    public static func readFile(_ path: String) -> Bytes? {
        guard let file = fopen(path, "rb") else { return nil }
        defer { fclose(file) }
        var out: Bytes = []
        var buffer = Bytes(repeating: 0, count: 4096)
        while true {
            let n = fread(&buffer, 1, buffer.count, file)
            if n <= 0 { break }
            out += buffer[0..<n]
            if out.count > 1 << 20 { return nil }
        }
        return out
    }

    public static func writeFile(_ path: String, _ bytes: Bytes) -> Bool {
        guard let file = fopen(path, "wb") else { return false }
        defer { fclose(file) }
        return fwrite(bytes, 1, bytes.count, file) == bytes.count
    }
}
