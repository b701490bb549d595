// Runs the built executables as a user would: argv in, exit status and output back.
// stdin, stdout and stderr go through temporary files, so no pipe can fill up and deadlock.
import XCTest
import TestHarness
#if canImport(Glibc)
import Glibc
#endif

struct ProcessResult {
    let status: Int32
    let stdout: String
    let stderr: String
}

enum Subprocess {
    /// The repository's top folder (this file is Tests/CarKeyToolTests/Subprocess.swift), for
    /// tests that read the tree's scripts, board files and build products.
    static var repositoryRoot: String {
        var parts = String(#filePath).split(separator: "/", omittingEmptySubsequences: false)
        parts.removeLast(3)
        return parts.joined(separator: "/")
    }

    /// The folder holding the test bundle, where SwiftPM also puts the executables.
    static var productsDirectory: String {
        var buffer = [CChar](repeating: 0, count: 4096)
        let n = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        precondition(n > 0, "readlink /proc/self/exe")
        let path = String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        // .../debug/OpenCarKeyPackageTests.xctest
        return String(path[..<path.lastIndex(of: "/")!])
    }

    static func run(_ executable: String, _ arguments: [String], stdin: String = "") throws -> ProcessResult {
        let folder = makeTemporaryDirectory()
        defer { removeTree(folder) }
        let inPath = folder + "/stdin", outPath = folder + "/stdout", errPath = folder + "/stderr"
        try write(stdin, to: inPath)

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, inPath, O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, errPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)

        // A bare name is one of the package's executables; an absolute path runs as given.
        let path = executable.hasPrefix("/") ? executable : AgentProcess.sibling(executable)
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, path, &actions, nil, argv, environ)
        guard spawned == 0 else { throw POSIXFailure(code: spawned, what: "posix_spawn \(path)") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let exitStatus = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        return ProcessResult(status: exitStatus, stdout: try read(outPath), stderr: try read(errPath))
    }

    static func makeTemporaryDirectory() -> String { TestFolders.make() }

    static func removeTree(_ path: String) { TestFolders.remove(path) }

    static func write(_ text: String, to path: String) throws {
        guard let handle = fopen(path, "wb") else { throw POSIXFailure(code: errno, what: "fopen \(path)") }
        defer { fclose(handle) }
        let bytes = Array(text.utf8)
        if !bytes.isEmpty { fwrite(bytes, 1, bytes.count, handle) }
    }

    static func read(_ path: String) throws -> String {
        guard let handle = fopen(path, "rb") else { throw POSIXFailure(code: errno, what: "fopen \(path)") }
        defer { fclose(handle) }
        var bytes = [UInt8]()
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = fread(&chunk, 1, chunk.count, handle)
            if n <= 0 { break }
            bytes += chunk[0..<n]
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

struct POSIXFailure: Error { let code: Int32; let what: String }
