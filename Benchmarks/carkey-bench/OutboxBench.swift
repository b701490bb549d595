// Durable messages per second from enqueue to broker acknowledgement, against the raw
// fdatasync rate of the same disk and against mosquitto_pub (not durable) to the same broker,
// all measured in this run. Group commit is what lets the durable path beat one sync per message.
#if canImport(Glibc)
import Glibc
#endif
import Drivers
import Protocol
import TestHarness

enum OutboxBench {
    static func run(messages: Int = 6000, producers: Int = 32, rounds: Int = 3) throws {
        var template = Array("/tmp/carkey-bench-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw Errno.current("mkdtemp") }
        let folder = String(cString: made)
        defer { _ = system("rm -rf '\(folder)'") }

        let broker = try MosquittoBroker()
        try broker.start()
        defer { broker.stop() }

        // Rounds interleave the three measurements so a noisy neighbour hits all of them;
        // medians are reported.
        var fsyncRates: [Double] = [], durableRates: [Double] = [], pubRates: [Double] = [], perCommit: [Double] = []
        var burstRates: [Double] = [], burstPerCommit: [Double] = []
        for round in 0..<rounds {
            fsyncRates.append(try fdatasyncRate(path: folder + "/fdatasync.bin", iterations: 300))
            // One message per enqueue call from many threads: the worst case for group commit.
            let durable = try durablePipelineRate(stateDirectory: folder + "/state-\(round)", brokerURL: broker.url,
                                                  messages: messages, producers: producers, burst: 1)
            durableRates.append(durable.rate)
            perCommit.append(durable.messagesPerCommit)
            // Bursts of 16 from 8 threads (an event plus its state report, a batch of events
            // written at once): one call, one fsync shared with whatever else waits.
            let burst = try durablePipelineRate(stateDirectory: folder + "/burst-\(round)", brokerURL: broker.url,
                                                messages: messages, producers: 8, burst: 16)
            burstRates.append(burst.rate)
            burstPerCommit.append(burst.messagesPerCommit)
            pubRates.append(try mosquittoPubRate(port: broker.port, messages: messages))
        }
        let fsyncRate = Bench.median(fsyncRates), pubRate = Bench.median(pubRates)
        let durableRate = PipelineResult(rate: Bench.median(durableRates), messagesPerCommit: Bench.median(perCommit))
        let burstRate = PipelineResult(rate: Bench.median(burstRates), messagesPerCommit: Bench.median(burstPerCommit))

        Bench.emit([
            ("benchmark", "outbox_durable_publish"),
            ("durable_per_sec", durableRate.rate),
            ("fdatasync_per_sec", fsyncRate),
            ("mosquitto_pub_per_sec", pubRate),
            ("ratio_vs_fdatasync", durableRate.rate / fsyncRate),
            ("ratio_vs_mosquitto_pub", durableRate.rate / pubRate),
            ("messages_per_commit", durableRate.messagesPerCommit),
            ("burst_durable_per_sec", burstRate.rate),
            ("burst_ratio_vs_fdatasync", burstRate.rate / fsyncRate),
            ("burst_messages_per_commit", burstRate.messagesPerCommit),
            ("target_ratio_vs_fdatasync", 5.0),
            ("meets_target", durableRate.rate / fsyncRate >= 5.0),
            ("burst_meets_target", burstRate.rate / fsyncRate >= 5.0),
            ("messages", messages),
            ("producers", producers),
            ("rounds", rounds),
        ])
    }

    /// Small writes each followed by fdatasync: one durable write per sync, the naive outbox.
    static func fdatasyncRate(path: String, iterations: Int) throws -> Double {
        let fd = try FileDescriptor.open(path, O_WRONLY | O_CREAT | O_TRUNC)
        defer { fd.close() }
        let record = [UInt8](repeating: 0x5a, count: 256)
        let seconds = Bench.seconds {
            for _ in 0..<iterations {
                try? fd.writeAll(record)
                fdatasync(fd.rawValue)
            }
        }
        return Double(iterations) / seconds
    }

    struct PipelineResult { let rate: Double; let messagesPerCommit: Double }

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
        link.stop(clock: { Bench.now() / 1_000_000 })
        return PipelineResult(rate: Double(total) / seconds, messagesPerCommit: Double(total) / Double(max(1, committer.commits)))
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
