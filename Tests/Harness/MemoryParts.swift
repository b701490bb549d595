// Where a process's resident memory is, by part, from /proc/PID/smaps: its executable's code,
// read-only data and data, the brk heap, malloc's arenas, thread stacks, other anonymous
// mappings, shared file mappings (SQLite's -shm) and the kernel's (vdso). For each part the
// resident size, what of it is anonymous or dirty (what the kernel cannot simply drop), and
// what was referenced since `clearReferences` (the working set of a window).
//
// Why referenced matters: an idle static agent's RSS is mostly clean pages of its own
// executable that start-up faulted in (a fault maps neighbouring page-cache pages too: Linux's
// fault-around, 64 KiB by default), which the kernel reclaims under pressure and re-reads on use; what the process
// keeps touching while idle is a small part of them.
#if canImport(Glibc)
import Glibc
#endif

public struct MemoryPart: Sendable, Equatable {
    public var name: String
    public var residentKiB = 0
    /// Anonymous pages (heap, stacks, written copies of the executable's data).
    public var anonymousKiB = 0
    /// Private dirty pages: anonymous ones plus written file pages.
    public var dirtyKiB = 0
    /// Pages referenced since the last `clearReferences`.
    public var referencedKiB = 0

    public init(name: String, residentKiB: Int = 0, anonymousKiB: Int = 0, dirtyKiB: Int = 0, referencedKiB: Int = 0) {
        self.name = name
        self.residentKiB = residentKiB
        self.anonymousKiB = anonymousKiB
        self.dirtyKiB = dirtyKiB
        self.referencedKiB = referencedKiB
    }
}

public enum MemoryParts {
    public static let order = ["code", "rodata", "data", "heap", "malloc-arenas", "thread-stacks", "main-stack",
                               "other-anonymous", "shared-files", "other-files", "kernel"]

    /// The parts of `pid`, nil when its smaps cannot be read; its executable's mappings are the
    /// ones naming the file /proc/PID/exe points at.
    public static func sample(_ pid: pid_t) -> [MemoryPart]? {
        guard let text = ProcessStats.read("/proc/\(pid)/smaps") else { return nil }
        var buffer = [CChar](repeating: 0, count: 4096)
        let length = readlink("/proc/\(pid)/exe", &buffer, buffer.count - 1)
        let executable = length > 0 ? String(decoding: buffer[0..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self) : ""
        return parts(smaps: text, executable: executable)
    }

    /// Forgets which pages were referenced (writes 1 to /proc/PID/clear_refs), so the next
    /// sample's `referencedKiB` covers only what the process touched after this call.
    @discardableResult
    public static func clearReferences(_ pid: pid_t) -> Bool {
        guard let file = fopen("/proc/\(pid)/clear_refs", "w") else { return false }
        defer { fclose(file) }
        return fputs("1", file) >= 0
    }

    struct Mapping {
        var start: UInt64
        var end: UInt64
        var permissions: String
        var path: String
        var fields: [String: Int] = [:]
    }

    /// The parts of an smaps text, in `order`, parts with nothing resident left out.
    public static func parts(smaps text: String, executable: String) -> [MemoryPart] {
        let mappings = parse(text)
        var byName: [String: MemoryPart] = [:]
        for (index, mapping) in mappings.enumerated() {
            let name = classify(mapping, previous: index > 0 ? mappings[index - 1] : nil,
                                next: index + 1 < mappings.count ? mappings[index + 1] : nil, executable: executable)
            var part = byName[name] ?? MemoryPart(name: name)
            part.residentKiB += mapping.fields["Rss"] ?? 0
            part.anonymousKiB += mapping.fields["Anonymous"] ?? 0
            part.dirtyKiB += mapping.fields["Private_Dirty"] ?? 0
            part.referencedKiB += mapping.fields["Referenced"] ?? 0
            byName[name] = part
        }
        return order.compactMap { byName[$0] }.filter { $0.residentKiB > 0 }
    }

    static func parse(_ text: String) -> [Mapping] {
        var mappings: [Mapping] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
            let columns = line.split(separator: " ", maxSplits: 5, omittingEmptySubsequences: true)
            if let range = columns.first, range.contains("-"), !range.hasSuffix(":"), columns.count >= 5 {
                let bounds = range.split(separator: "-")
                guard bounds.count == 2, let start = UInt64(bounds[0], radix: 16), let end = UInt64(bounds[1], radix: 16) else { continue }
                let path = columns.count > 5 ? String(columns[5]).trimmingSpaces : ""
                mappings.append(Mapping(start: start, end: end, permissions: String(columns[1]), path: path))
            } else if let colon = line.firstIndex(of: ":"), !mappings.isEmpty {
                let key = String(line[..<colon])
                let value = line[line.index(after: colon)...].split(separator: " ").first.flatMap { Int($0) }
                if let value, line.hasSuffix("kB") { mappings[mappings.count - 1].fields[key] = value }
            }
        }
        return mappings
    }

    /// glibc's thread stacks are anonymous read-write mappings right above a no-access guard
    /// page (nptl/allocatestack.c maps the stack and protects its lowest guard-size bytes with
    /// PROT_NONE; the guard is one page by default, pthread_attr_setguardsize(3)); its secondary
    /// malloc arenas are anonymous read-write mappings followed by the no-access rest of their
    /// reservation (malloc/arena.c new_heap: HEAP_MAX_SIZE, 64 MiB on 64-bit, mapped PROT_NONE,
    /// then made read-write as the heap grows).
    static func classify(_ mapping: Mapping, previous: Mapping?, next: Mapping?, executable: String) -> String {
        let path = mapping.path
        if !executable.isEmpty && path == executable {
            switch mapping.permissions.prefix(3) {
            case "r-x": return "code"
            case "r--": return "rodata"
            default: return "data"
            }
        }
        switch path {
        case "[heap]": return "heap"
        case "[stack]": return "main-stack"
        case "[vdso]", "[vvar]", "[vvar_vclock]", "[vsyscall]": return "kernel"
        default: break
        }
        if path.hasPrefix("/") {
            return mapping.permissions.hasSuffix("s") ? "shared-files" : "other-files"
        }
        if mapping.permissions.hasPrefix("rw") {
            if let previous, previous.end == mapping.start, previous.permissions.hasPrefix("---"), previous.path.isEmpty,
               previous.end - previous.start <= 64 * 1024 {
                return "thread-stacks"
            }
            if let next, next.start == mapping.end, next.permissions.hasPrefix("---"), next.path.isEmpty,
               next.end - next.start > 64 * 1024 {
                return "malloc-arenas"
            }
        }
        return "other-anonymous"
    }
}

extension String {
    fileprivate var trimmingSpaces: String {
        var text = Substring(self)
        while text.first == " " { text = text.dropFirst() }
        while text.last == " " { text = text.dropLast() }
        return String(text)
    }
}
