// Crash safety: a writer process (carkey-storage-crasher) is SIGKILLed at random moments, mostly
// mid-transaction, and the store is reopened after each kill. Every round must find a healthy
// file, every reported commit present, contiguous sequence numbers and no partial transaction.
// CARKEY_CRASH_ROUNDS raises the round count for soak runs.
import XCTest
@testable import Drivers
import Protocol
#if canImport(Glibc)
import Glibc
#endif

final class StorageCrashTests: StorageTestCase {
    private var rounds: Int {
        getenv("CARKEY_CRASH_ROUNDS").flatMap { Int(String(cString: $0)) } ?? 8
    }

    func testKillingTheWriterMidTransactionNeverLosesOrTearsACommit() throws {
        let crashTest = try XCTUnwrap(RecordKind(rawValue: "crash-test"))
        var previousBatch: Int64 = 0
        var killedMidRun = 0
        var killedInOpenTransaction = 0
        for round in 1...rounds {
            let outcome = try runWriterAndKill(round: round)
            killedMidRun += outcome.killed ? 1 : 0

            let store = try openStore()
            XCTAssertEqual(try store.integrityCheck(), ["ok"], "round \(round)")
            let events = try store.events(since: 0, limit: 1_000_000)
            let lastSeq = try store.lastEventSequence()
            XCTAssertEqual(events.map(\.seq), Array(stride(from: 1, through: lastSeq, by: 1)),
                           "round \(round): contiguous from 1, nothing missing")

            // The progress record is written last in each transaction; its batch must match the
            // events exactly: every batch up to it complete, nothing of a later one.
            let progress = try XCTUnwrap(try store.get(kind: crashTest, id: Bytes("progress".utf8)), "round \(round)")
            let batch = progress.reduce(Int64(0)) { $0 << 8 | Int64($1) }
            var expected = [(Int64, Int, Int)]()
            for b in stride(from: Int64(1), through: batch, by: 1) {
                let count = 1 + Int(b % 5)
                for index in 0..<count { expected.append((b, index, count)) }
            }
            let found = events.compactMap { Self.parseDetail($0.event.detailJSON) }
            XCTAssertEqual(found.count, events.count, "round \(round): every event is the writer's")
            XCTAssertTrue(found.elementsEqual(expected, by: ==), "round \(round): batches complete and in order, none partial")
            XCTAssertEqual(try store.trustedTime(), batch, "round \(round): the mark moved with its transaction")
            XCTAssertEqual(try store.list(kind: crashTest).tampered, [], "round \(round)")

            // Committed means reported on stdout; at most one commit can be unreported (killed
            // between COMMIT and the write to stdout).
            XCTAssertGreaterThanOrEqual(batch, outcome.lastReportedBatch, "round \(round): a reported commit was lost")
            XCTAssertLessThanOrEqual(batch, outcome.lastReportedBatch + 1, "round \(round)")
            XCTAssertGreaterThanOrEqual(batch, previousBatch, "round \(round): went backwards")
            XCTAssertGreaterThan(batch, previousBatch, "round \(round): the writer made progress")
            // The last line says "begin B" and B is not in the file: the kill hit an open transaction.
            if outcome.lastBegun == batch + 1 { killedInOpenTransaction += 1 }
            previousBatch = batch
        }
        XCTAssertEqual(killedMidRun, rounds, "every round ended by SIGKILL, not by the writer stopping")
        // Most of the writer's time is spent inside transactions; a run where no kill hit one
        // would not have tested anything (odds well below one in a thousand at 8 rounds).
        XCTAssertGreaterThan(killedInOpenTransaction, 0, "no kill landed inside an open transaction")
        print("storage crash test: \(rounds) rounds, \(killedInOpenTransaction) killed inside an open transaction, \(previousBatch) batches committed")
    }

    private struct Outcome {
        let killed: Bool
        let lastReportedBatch: Int64
        /// The batch of the last "begin" line, if the last complete line is one.
        let lastBegun: Int64?
    }

    /// Starts the writer, waits until it has committed at least once, lets it run a random
    /// 0-40 ms more, then SIGKILLs it.
    private func runWriterAndKill(round: Int) throws -> Outcome {
        let outPath = root + "/crasher-\(round).out", errPath = root + "/crasher-\(round).err"
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, outPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, errPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        let executable = Self.productsDirectory + "/carkey-storage-crasher"
        let argv: [UnsafeMutablePointer<CChar>?] = [strdup(executable), strdup(stateDir), nil]
        defer { argv.forEach { free($0) } }
        var pid = pid_t()
        let spawned = posix_spawn(&pid, executable, &actions, nil, argv, environ)
        guard spawned == 0 else { throw Errno(spawned, "spawn \(executable)") }

        let deadline = time(nil) + 60
        while Self.reported(outPath).committed.isEmpty && time(nil) < deadline {
            var status: Int32 = 0
            if waitpid(pid, &status, WNOHANG) == pid {
                let stderr = String(decoding: (try? Files.read(errPath)) ?? [], as: UTF8.self)
                XCTFail("round \(round): writer exited early (status \(status)): \(stderr)")
                return Outcome(killed: false, lastReportedBatch: Self.reported(outPath).committed.last ?? 0, lastBegun: nil)
            }
            usleep(1000)
        }
        usleep(UInt32(try SystemRandom().randomBytes(1)[0]) * 160) // 0 to ~40 ms
        kill(pid, SIGKILL)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        // WIFSIGNALED / WTERMSIG are macros: the low 7 bits hold the terminating signal.
        let killed = status & 0x7f == SIGKILL
        let lines = Self.reported(outPath)
        return Outcome(killed: killed, lastReportedBatch: lines.committed.last ?? 0, lastBegun: lines.lastBegun)
    }

    /// Batch numbers from complete "committed BATCH LASTSEQ" lines (a torn last line is
    /// ignored), and the batch of a trailing "begin BATCH" line.
    private static func reported(_ path: String) -> (committed: [Int64], lastBegun: Int64?) {
        let text = String(decoding: (try? Files.read(path, limit: 1 << 24)) ?? [], as: UTF8.self)
        guard let lastNewline = text.lastIndex(of: "\n") else { return ([], nil) }
        let lines = text[...lastNewline].split(separator: "\n").map { $0.split(separator: " ") }
        let committed = lines.compactMap { $0.count == 3 && $0[0] == "committed" ? Int64($0[1]) : nil }
        let lastBegun = lines.last.flatMap { $0.count == 2 && $0[0] == "begin" ? Int64($0[1]) : nil }
        return (committed, lastBegun)
    }

    /// Reads {"batch":B,"index":I,"count":C} as written by the crasher.
    private static func parseDetail(_ json: String?) -> (Int64, Int, Int)? {
        guard let json, json.hasPrefix("{"), json.hasSuffix("}") else { return nil }
        var fields = [String: Int64]()
        for pair in json.dropFirst().dropLast().split(separator: ",") {
            let parts = pair.split(separator: ":")
            guard parts.count == 2, let value = Int64(parts[1]) else { return nil }
            fields[parts[0].trimmingCharacters(in: "\"")] = value
        }
        guard let batch = fields["batch"], let index = fields["index"], let count = fields["count"] else { return nil }
        return (batch, Int(index), Int(count))
    }

    /// The folder holding the test bundle, where SwiftPM also puts the helper executable.
    private static var productsDirectory: String {
        var buffer = [CChar](repeating: 0, count: 4096)
        let n = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard n > 0 else { return "." }
        let path = String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return path.lastIndex(of: "/").map { String(path[..<$0]) } ?? "."
    }
}

private extension Substring {
    func trimmingCharacters(in quote: Character) -> String {
        String(drop { $0 == quote }.reversed().drop { $0 == quote }.reversed())
    }
}
