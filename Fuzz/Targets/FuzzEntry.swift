// What both fuzz executables run: libFuzzer's per-input callback (target from the
// CARKEY_FUZZ_TARGET environment variable) and, without libFuzzer, a small command line
// (list, replay files, smoke a corpus, write seeds).
#if canImport(Glibc)
import Glibc
#endif
import Protocol

public enum FuzzEntry {
    nonisolated(unsafe) static var selected: FuzzTarget?

    /// libFuzzer's callback body: a broken property traps with its name.
    public static func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int, targets: [FuzzTarget]) -> CInt {
        if selected == nil {
            guard let name = getenv("CARKEY_FUZZ_TARGET").map({ String(cString: $0) }),
                  let target = FuzzRegistry.target(named: name, in: targets) else {
                standardError("carkey-fuzz: set CARKEY_FUZZ_TARGET to one of: \(targets.map(\.name).joined(separator: " "))\n")
                abort()
            }
            selected = target
        }
        let input = size == 0 || data == nil ? [] : Bytes(UnsafeBufferPointer(start: data, count: size))
        do throws(PropertyViolation) {
            _ = try selected!.check(input)
        } catch {
            standardError("\(selected!.name): \(error.description)\n")
            abort()
        }
        return 0
    }

    /// Non-libFuzzer use: `list`, `replay TARGET FILE...`, `smoke TARGET DIR [N]`,
    /// `seed TARGET OUTDIR FILE...` (keeps the files the target accepts, plus all when none is).
    public static func main(_ arguments: [String], targets: [FuzzTarget]) -> Int32 {
        let args = Array(arguments.dropFirst())
        guard let verb = args.first else {
            print("usage: carkey-fuzz list | replay TARGET FILE... | smoke TARGET DIR [MUTATIONS] | seed TARGET OUTDIR FILE...")
            return 2
        }
        if verb == "seed-documents", args.count == 2 {
            for (name, documents) in SeedDocuments.generate() {
                for document in documents {
                    _ = SmokeRunner.writeFile(args[1] + "/" + name + "-" + Array(SHA256.hash(document).prefix(8)).hexString, document)
                }
            }
            return 0
        }
        if verb == "list" {
            for t in targets { print("\(t.name)\t\(t.properties)") }
            return 0
        }
        guard args.count >= 2, let target = FuzzRegistry.target(named: args[1], in: targets) else {
            print("unknown target; try list")
            return 2
        }
        switch verb {
        case "replay":
            var failed = false
            for path in args.dropFirst(2) {
                guard let bytes = SmokeRunner.readFile(path) else { print("\(path): unreadable"); failed = true; continue }
                do throws(PropertyViolation) {
                    print("\(path): \(try target.check(bytes) ? "accepted" : "refused")")
                } catch { print("\(path): \(error)"); failed = true }
            }
            return failed ? 1 : 0
        case "smoke":
            let seeds = SmokeRunner.loadCorpus(args.count > 2 ? args[2] : "Fuzz/corpus/\(target.name)")
            let outcome = SmokeRunner.run(target, seeds: seeds, mutations: args.count > 3 ? Int(args[3]) ?? 2000 : 2000)
            print("\(target.name): \(outcome.executions) execs, \(outcome.accepted) accepted, \(outcome.seeds) seeds")
            if let v = outcome.violation { print("VIOLATION \(v.error) input \(v.input.hexString)"); return 1 }
            return 0
        case "seed":
            guard args.count >= 3 else { return 2 }
            let out = args[2]
            var kept = 0
            for path in args.dropFirst(3) {
                guard let bytes = SmokeRunner.readFile(path), !bytes.isEmpty else { continue }
                let accepted = (try? target.check(bytes)) ?? false
                if accepted {
                    let name = out + "/seed-" + Array(SHA256.hash(bytes).prefix(8)).hexString
                    if SmokeRunner.writeFile(name, bytes) { kept += 1 }
                }
            }
            print("\(target.name): kept \(kept) accepted seeds")
            return 0
        default:
            print("unknown verb \(verb)")
            return 2
        }
    }
}

/// Unbuffered, so the property's name is out before abort().
func standardError(_ text: String) {
    let bytes = Array(text.utf8)
    _ = bytes.withUnsafeBufferPointer { write(2, $0.baseAddress, $0.count) }
}
