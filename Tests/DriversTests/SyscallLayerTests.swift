// Keeps the system-call layer the only one: outside Sources/Drivers/System no file calls
// read/write/close/poll/pipe/fcntl on a raw descriptor, starts a pthread, stores a pthread
// mutex/condition or sleeps with usleep. Those go through FileDescriptor, Poll, SystemThread,
// Lock/Condition and the injected clock, where EINTR and errors have one policy.
import Foundation
import XCTest

final class SyscallLayerTests: XCTestCase {
    private static var sourcesRoot: String {
        let parts = #filePath.split(separator: "/", omittingEmptySubsequences: false)
        return parts.dropLast(3).joined(separator: "/") + "/Sources"
    }

    /// Files whose raw call is on a descriptor a C library owns: path suffix -> why.
    static let exceptions: [String: String] = [:]

    static let rules: [(name: String, pattern: String)] = [
        ("Glibc-qualified syscall", #"\bGlibc\.(read|write|close|poll|pipe|fcntl)\s*\("#),
        ("raw pipe/fcntl/eventfd/usleep", #"(?<![.\w])(pipe|pipe2|fcntl|eventfd|usleep|nanosleep)\s*\("#),
        ("raw read/write/close/poll on a descriptor", #"(?<![.\w])(read|write|close|poll)\s*\(\s*(fd|[\w.]*rawValue)\b"#),
        ("pthread_create", #"\bpthread_create\s*\("#),
        ("stored pthread mutex/condition", #"\bpthread_(mutex|cond)_t\b"#),
    ]

    /// "path:line: rule" for every raw call in `code` (comments and strings already stripped).
    static func violations(in code: String, path: String) -> [String] {
        var found: [String] = []
        for (number, line) in code.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            for rule in rules where line.range(of: rule.pattern, options: .regularExpression) != nil {
                found.append("\(path):\(number + 1): \(rule.name): \(line.trimmingCharacters(in: .whitespaces))")
            }
        }
        return found
    }

    func testNoRawSystemCallsOutsideTheSystemLayer() throws {
        let root = Self.sourcesRoot
        let enumerator = try XCTUnwrap(FileManager.default.enumerator(atPath: root))
        var scanned = 0
        var found: [String] = []
        while let relative = enumerator.nextObject() as? String {
            guard relative.hasSuffix(".swift"), !relative.hasPrefix("Drivers/System/") else { continue }
            if Self.exceptions.keys.contains(where: { relative.hasSuffix($0) }) { continue }
            let text = try String(contentsOfFile: root + "/" + relative, encoding: .utf8)
            found += Self.violations(in: SourceFolder.stripCommentsAndStrings(text), path: relative)
            scanned += 1
        }
        XCTAssertGreaterThan(scanned, 100, "Sources not found at \(root)")
        XCTAssertEqual(found, [], "use FileDescriptor/Poll/SystemThread/Lock from Drivers/System:\n" + found.joined(separator: "\n"))
    }

    /// `entry.pointee.d_name` copies readdir's whole 256-byte name field, past the end of a
    /// short name's record: ASan found it in five places of Sources, then in the fuzz smoke's
    /// corpus loader once a corpus held ~800 files. Every tree with Swift in it reads names
    /// through DirectoryEntry.name, which reads in place.
    func testDirectoryEntryNamesAreReadInPlaceEverywhere() throws {
        let repository = (Self.sourcesRoot as NSString).deletingLastPathComponent
        var scanned = 0
        var found: [String] = []
        for tree in ["Sources", "Fuzz", "Tests", "Benchmarks"] {
            let enumerator = try XCTUnwrap(FileManager.default.enumerator(atPath: repository + "/" + tree))
            while let relative = enumerator.nextObject() as? String {
                guard relative.hasSuffix(".swift"), relative != "Drivers/System/DirectoryEntry.swift" else { continue }
                let text = SourceFolder.stripCommentsAndStrings(try String(contentsOfFile: repository + "/" + tree + "/" + relative, encoding: .utf8))
                for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated()
                    where line.range(of: #"\.d_name\b"#, options: .regularExpression) != nil {
                    found.append("\(tree)/\(relative):\(number + 1): \(line.trimmingCharacters(in: .whitespaces))")
                }
                scanned += 1
            }
        }
        XCTAssertGreaterThan(scanned, 300, "repository not found at \(repository)")
        XCTAssertEqual(found, [], "read readdir names with DirectoryEntry.name(entry):\n" + found.joined(separator: "\n"))
    }

    /// The scanner itself: each rule fires on code, none on comments, strings or method calls.
    func testTheScannerFlagsRawCallsButNotWrappers() {
        let flagged = """
            _ = Glibc.read(fd, &byte, 1)
            guard pipe(&ends) == 0 else { return }
            _ = write(writeEnd.rawValue, &byte, 1)
            close(fd)
            pthread_create(&thread, nil, body, nil)
            private var mutex = pthread_mutex_t()
            usleep(50_000)
            """
        XCTAssertEqual(Self.violations(in: flagged, path: "X.swift").count, 7)
        let clean = SourceFolder.stripCommentsAndStrings("""
            // close(fd) once the pipe(2) is drained; pthread_create is wrapped
            let text = "usleep(1)"
            try descriptor.write(raw)
            readEnd.close()
            let ends = try FileDescriptor.pipe(nonBlocking: true)
            try write(.sysStatus, value: bits)
            close(id)
            """)
        XCTAssertEqual(Self.violations(in: clean, path: "X.swift"), [])
    }
}
