// Benchmark hooks the agent honours, read once at start-up from the environment. They exist
// so `make bench` can measure the real agent under conditions this machine does not have
// (a slow SD card); a production unit never sets them, and the agent says loudly when one is.
//
//   CARKEY_BENCH_SYNC_DELAY_US=N   sleep N microseconds (0...1000000) after every SQLite sync
#if canImport(Glibc)
import Glibc
#endif
import Drivers

enum BenchmarkHooks {
    static let maxSyncDelayMicros: UInt32 = 1_000_000

    static func apply(log: AgentLog) throws {
        let name = StorageSyncs.delayEnvironmentVariable
        guard let raw = getenv(name).map({ String(cString: $0) }) else { return }
        // Bounded parse: digits only, at most a second; anything else refuses to start rather
        // than run with a guess.
        guard raw.count <= 7, raw.allSatisfy({ $0.isASCII && $0.isNumber }), let micros = UInt32(raw),
              micros <= maxSyncDelayMicros else {
            throw AgentStartFailure(description: "\(name) must be a whole number of microseconds, 0...\(maxSyncDelayMicros)")
        }
        StorageSyncs.addedSyncDelayMicros = micros
        log.warn("storage: benchmark hook \(name)=\(micros): every sync sleeps \(micros) us (not for a real car)")
    }
}
