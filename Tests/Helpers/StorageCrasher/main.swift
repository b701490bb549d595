// carkey-storage-crasher STATE_DIR: a writer for the store's crash test. It commits batches
// forever until the test SIGKILLs it. Each transaction appends 1 to 5 events tagged with the
// batch number, rewrites sealed records and raises the trusted-time mark, pausing between
// statements so a kill lands mid-transaction most of the time. It writes "begin BATCH" to stdout
// when a transaction starts and "committed BATCH LASTSEQ" after it commits, so the test knows
// what must have survived and whether the kill hit an open transaction.
#if canImport(Glibc)
import Glibc
#endif
import Drivers
import Protocol

func say(_ line: String, to fd: Int32 = 1) {
    let bytes = Array((line + "\n").utf8)
    _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
}

func fail(_ message: String) -> Never {
    say("carkey-storage-crasher: \(message)", to: 2)
    exit(1)
}

guard CommandLine.arguments.count == 2 else { fail("usage: carkey-storage-crasher STATE_DIR") }
guard let kind = RecordKind(rawValue: "crash-test") else { fail("record kind") }
let progressID = Bytes("progress".utf8)

do {
    let store = try CarStore.open(stateDirectory: CommandLine.arguments[1])
    let random = SystemRandom()
    while true {
        let (batch, lastSeq) = try store.write { transaction -> (Int64, Int64) in
            let previous = try transaction.get(kind: kind, id: progressID).map { bytes in
                bytes.reduce(Int64(0)) { $0 << 8 | Int64($1) }
            } ?? 0
            let batch = previous + 1
            say("begin \(batch)")
            let count = 1 + Int(batch % 5)
            var last: Int64 = 0
            for index in 0..<count {
                last = try transaction.appendEvent(NewEvent(
                    kind: .storage, time: EventTime(seconds: batch, trusted: false), action: EventAction(unlisted: "crash-test"), result: "ok",
                    detailJSON: "{\"batch\":\(batch),\"index\":\(index),\"count\":\(count)}")).seq
                usleep(UInt32(try random.randomBytes(1)[0]) * 4)
            }
            try transaction.put(try random.randomBytes(200), kind: kind, id: Bytes("batch-\(batch % 8)".utf8))
            try transaction.advanceTrustedTime(to: batch)
            try transaction.put((0..<8).map { UInt8(truncatingIfNeeded: batch >> (56 - 8 * $0)) }, kind: kind, id: progressID)
            return (batch, last)
        }
        say("committed \(batch) \(lastSeq)")
        // Now and then move the WAL into the main file, so kills also land mid-checkpoint.
        if batch % 16 == 0 { try store.database.checkpoint() }
    }
} catch {
    fail("\(error)")
}
