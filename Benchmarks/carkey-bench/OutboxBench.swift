// Durable messages per second from enqueue to broker acknowledgement (the group-commit path:
// GroupCommitter -> SQLite outbox -> CloudLink -> a local mosquitto), against the disk's own
// price of a durable write (FsyncReference: in-place overwrite + fdatasync) and against
// mosquitto_pub (not durable) to the same broker, all measured in this run, interleaved in
// rounds. A second part fixes the price of a sync (the counting VFS sleeps after every
// xSync, as an SD card at 2-10 ms would take) and reports throughput as a multiple of
// 1/fsync-cost: what group commit buys where fsync is slow. Messages per sync come from the
// VFS's counters (every sync of the run: commits of enqueues and of acknowledgements alike).
#if canImport(Glibc)
import Glibc
#endif
import Drivers
import Protocol
import TestHarness

enum OutboxBench {
    static let targetRatio = 5.0

    static func run(messages: Int = 6000, producers: Int = 32, rounds: Int = 3,
                    slowSyncDelaysMicros: [UInt32] = [2000, 5000], slowMessages: Int = 3000) throws {
        var template = Array("/tmp/carkey-bench-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw Errno.current("mkdtemp") }
        let folder = String(cString: made)
        defer { _ = system("rm -rf '\(folder)'") }

        let broker = try MosquittoBroker()
        try broker.start()
        defer { broker.stop() }
        let reference = try FsyncReference(path: folder + "/fdatasync.bin")

        // Each round: the reference right before and right after each measured run (the mean
        // sync time of the two), so a ratio is taken against the disk as it was then; min and
        // median over rounds are reported.
        var fsyncRates = RoundFigures(), fsyncMicros = RoundFigures(), pubRates = RoundFigures()
        var single = PipelineFigures(), burst = PipelineFigures()
        func measureDisk() throws -> Double {
            let disk = try reference.measure(iterations: 200)
            fsyncRates.append(disk.perSec)
            fsyncMicros.append(disk.meanMicros)
            return disk.meanMicros
        }
        for round in 0..<rounds {
            let beforeSingle = try measureDisk()
            // One message per enqueue call from many threads: the worst case for group commit.
            let one = try durablePipelineRate(stateDirectory: folder + "/state-\(round)", brokerURL: broker.url,
                                              messages: messages, producers: producers, burst: 1)
            let between = try measureDisk()
            single.add(one, reference: 2e6 / (beforeSingle + between))
            // Bursts of 16 from 8 threads (an event plus its state report, a batch of events
            // written at once): one call, one fsync shared with whatever else waits.
            let many = try durablePipelineRate(stateDirectory: folder + "/burst-\(round)", brokerURL: broker.url,
                                               messages: messages, producers: 8, burst: 16)
            burst.add(many, reference: 2e6 / (between + (try measureDisk())))
            pubRates.append(try mosquittoPubRate(port: broker.port, messages: messages))
        }

        Bench.emit([
            ("benchmark", "outbox_durable_publish"),
            ("path", "GroupCommitter + SQLite outbox + CloudLink to a local mosquitto (not the agent loop)"),
            ("durable_per_sec", single.rates.median),
            ("fdatasync_per_sec", fsyncRates.median),
            ("fdatasync_per_sec_min", fsyncRates.min),
            ("fdatasync_per_sec_max", fsyncRates.max),
            ("fdatasync_us_min", fsyncMicros.min),
            ("fdatasync_us_median", fsyncMicros.median),
            ("mosquitto_pub_per_sec", pubRates.median),
            ("ratio_vs_fdatasync", single.ratios.median),
            ("ratio_vs_fdatasync_min", single.ratios.min),
            ("ratio_vs_fdatasync_max", single.ratios.max),
            ("ratio_vs_in_run_sync_cost", single.inRunRatios.median),
            ("ratio_vs_mosquitto_pub", single.rates.median / pubRates.median),
            ("messages_per_commit", single.perCommit.median),
            ("messages_per_sync", single.perSync.median),
            ("burst_durable_per_sec", burst.rates.median),
            ("burst_ratio_vs_fdatasync", burst.ratios.median),
            ("burst_ratio_vs_fdatasync_min", burst.ratios.min),
            ("burst_messages_per_commit", burst.perCommit.median),
            ("burst_messages_per_sync", burst.perSync.median),
            ("target_ratio_vs_fdatasync", targetRatio),
            ("meets_target", single.ratios.median >= targetRatio),
            ("burst_meets_target", burst.ratios.median >= targetRatio),
            ("messages", messages),
            ("producers", producers),
            ("rounds", rounds),
        ])

        for delay in slowSyncDelaysMicros {
            try slowSync(delayMicros: delay, folder: folder, brokerURL: broker.url, messages: slowMessages,
                         producers: producers, rounds: rounds)
        }
    }

    /// The same pipeline with every sync made to cost at least `delayMicros` (the counting
    /// VFS sleeps after the real sync). Throughput over 1/(mean time per sync, measured by the
    /// VFS in the same run): how many messages each sync carried to the broker, in effect.
    static func slowSync(delayMicros: UInt32, folder: String, brokerURL: String, messages: Int, producers: Int,
                         rounds: Int) throws {
        StorageSyncs.addedSyncDelayMicros = delayMicros
        defer { StorageSyncs.addedSyncDelayMicros = 0 }
        var single = PipelineFigures(), burst = PipelineFigures(), syncMicros = RoundFigures()
        for round in 0..<rounds {
            let one = try durablePipelineRate(stateDirectory: folder + "/slow-\(delayMicros)-\(round)", brokerURL: brokerURL,
                                              messages: messages, producers: producers, burst: 1)
            single.add(one, reference: 1e6 / one.meanSyncMicros)
            syncMicros.append(one.meanSyncMicros)
            let many = try durablePipelineRate(stateDirectory: folder + "/slow-burst-\(delayMicros)-\(round)", brokerURL: brokerURL,
                                               messages: messages, producers: 8, burst: 16)
            burst.add(many, reference: 1e6 / many.meanSyncMicros)
        }
        Bench.emit([
            ("benchmark", "outbox_durable_publish_slow_fsync"),
            ("path", "GroupCommitter + SQLite outbox + CloudLink to a local mosquitto, every xSync delayed"),
            ("sync_delay_us", Int(delayMicros)),
            ("fsync_cost_us_median", syncMicros.median),
            ("durable_per_sec", single.rates.median),
            ("one_sync_per_message_per_sec", 1e6 / syncMicros.median),
            ("ratio_vs_fsync_cost", single.ratios.median),
            ("ratio_vs_fsync_cost_min", single.ratios.min),
            ("messages_per_sync", single.perSync.median),
            ("messages_per_commit", single.perCommit.median),
            ("burst_durable_per_sec", burst.rates.median),
            ("burst_ratio_vs_fsync_cost", burst.ratios.median),
            ("burst_messages_per_sync", burst.perSync.median),
            ("target_ratio_vs_fsync_cost", targetRatio),
            ("meets_target", single.ratios.median >= targetRatio),
            ("burst_meets_target", burst.ratios.median >= targetRatio),
            ("messages", messages),
            ("producers", producers),
            ("rounds", rounds),
        ])
    }

    struct PipelineResult {
        let rate: Double
        let messagesPerCommit: Double
        let messagesPerSync: Double
        let meanSyncMicros: Double
    }

    /// Per-round figures of one pipeline shape; `reference` is the one-sync-per-message rate
    /// measured next to it.
    struct PipelineFigures {
        var rates = RoundFigures(), ratios = RoundFigures(), perCommit = RoundFigures(), perSync = RoundFigures()
        /// Throughput over 1/(the mean sync time the VFS saw during the run itself).
        var inRunRatios = RoundFigures()
        mutating func add(_ result: PipelineResult, reference: Double) {
            rates.append(result.rate)
            inRunRatios.append(result.rate * result.meanSyncMicros / 1e6)
            ratios.append(result.rate / reference)
            perCommit.append(result.messagesPerCommit)
            perSync.append(result.messagesPerSync)
        }
    }

    /// Producers enqueue through group commit while the cloud link drains to the broker; the
    /// clock stops when the last message is acknowledged and deleted.
    static func durablePipelineRate(stateDirectory: String, brokerURL: String, messages: Int, producers: Int,
                                    burst: Int) throws -> PipelineResult {
        let store = try CarStore.open(stateDirectory: stateDirectory)
        let outbox = SQLiteOutbox(store: store)
        let committer = GroupCommitter(outbox: outbox)
        let transport = try MosquittoTransport(options: MQTTConnectOptions(endpoint: MQTTEndpoint(url: brokerURL), clientID: "bench-car", sendMaximum: 256))
        var birth: UInt64 = 0
        let link = CloudLink(settings: CloudLinkSettings(vehicleID: "BENCH", window: 256), transport: transport, outbox: outbox,
                             nextBirthSequence: { birth += 1; return birth }, unitRandom: { 0 })
        // Connect first, so the measurement is enqueue-to-ack, not connection setup.
        while link.state != .connected { _ = link.step(nowMillis: Bench.now() / 1_000_000, serviceMillis: 10) }

        let perProducer = messages / producers
        let total = perProducer * producers
        let syncsBefore = StorageSyncs.counters
        let start = Bench.now()
        let threads = ProducerThreads(count: producers) { producer in
            for start in stride(from: 0, to: perProducer, by: burst) {
                let entries = (start..<min(start + burst, perProducer)).map { i in
                    OutboxEntry(topic: "vehicles/BENCH/events", payload: Array("{\"p\":\(producer),\"i\":\(i)}".utf8), qos: 1, priority: .event)
                }
                _ = try? committer.enqueue(entries)
            }
        }
        var remaining = total
        var lastCheck: UInt64 = 0
        while remaining > 0 {
            let now = Bench.now() / 1_000_000
            _ = link.step(nowMillis: now, serviceMillis: 1)
            // depth() flushes acknowledgements: ask only every 20 ms, as a real observer would.
            if now >= lastCheck + 20 && !threads.running {
                lastCheck = now
                remaining = (try? outbox.depth()) ?? remaining
            }
        }
        threads.join()
        let seconds = Double(Bench.now() - start) / 1e9
        let syncs = StorageSyncs.counters.since(syncsBefore)
        link.stop(clock: { Bench.now() / 1_000_000 })
        return PipelineResult(rate: Double(total) / seconds, messagesPerCommit: Double(total) / Double(max(1, committer.commits)),
                              messagesPerSync: Double(total) / Double(max(1, syncs.syncs)), meanSyncMicros: syncs.meanSyncMicros)
    }

    /// mosquitto_pub -l publishes one message per stdin line over one connection, QoS 1.
    static func mosquittoPubRate(port: Int32, messages: Int) throws -> Double {
        var template = Array("/tmp/carkey-bench-lines-XXXXXX".utf8CString)
        let fd = mkstemp(&template)
        let path = String(cString: template)
        defer { unlink(path) }
        let lines = (0..<messages).map { "{\"i\":\($0)}\n" }.joined()
        _ = Array(lines.utf8).withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
        let seconds = Bench.seconds {
            _ = system("mosquitto_pub -h 127.0.0.1 -p \(port) -t bench/pub -q 1 -l < '\(path)'")
        }
        return Double(messages) / seconds
    }
}

/// N threads running `body(index)`; `running` is true until all have returned.
final class ProducerThreads: @unchecked Sendable {
    private var threads: [pthread_t] = []
    private let remaining: UnsafeMutablePointer<Int>
    private var mutex = pthread_mutex_t()

    init(count: Int, _ body: @escaping @Sendable (Int) -> Void) {
        remaining = .allocate(capacity: 1)
        remaining.pointee = count
        pthread_mutex_init(&mutex, nil)
        for index in 0..<count {
            final class Job { let run: () -> Void; init(_ run: @escaping () -> Void) { self.run = run } }
            let job = Job { [self] in
                body(index)
                pthread_mutex_lock(&self.mutex)
                self.remaining.pointee -= 1
                pthread_mutex_unlock(&self.mutex)
            }
            var thread = pthread_t()
            pthread_create(&thread, nil, { raw in
                Unmanaged<Job>.fromOpaque(raw!).takeRetainedValue().run()
                return nil
            }, Unmanaged.passRetained(job).toOpaque())
            threads.append(thread)
        }
    }

    var running: Bool {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        return remaining.pointee > 0
    }

    func join() { for thread in threads { pthread_join(thread, nil) } }

    deinit { remaining.deallocate() }
}
