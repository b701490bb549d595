// A subscriber that counts what arrives at the broker, serviced on its own thread, with memory
// that does not grow per message: one bit per event sequence number (an hour of load is a few
// hundred kilobytes) instead of a list of payloads. It answers "did every event arrive, and how
// many twice", and how fast messages arrived.
#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import Drivers

public final class BrokerEventCounter: @unchecked Sendable {
    public struct Snapshot: Sendable, Equatable {
        /// Messages received, duplicates included.
        public var messages = 0
        /// Distinct event sequence numbers seen ("seq" in the payload).
        public var distinctSequences = 0
        /// Messages whose sequence had been seen before (at-least-once redelivery).
        public var duplicates = 0
        public var highestSequence = 0
        /// Monotonic seconds of the first and latest arrival (0 before any).
        public var firstArrival = 0.0
        public var lastArrival = 0.0

        public init() {}

        /// Sequences 1...highest with no arrival.
        public var gaps: Int { highestSequence - distinctSequences }
    }

    private struct State {
        var snapshot = Snapshot()
        var seen: [UInt64] = []
        var running = true
    }

    private let transport: MosquittoTransport
    private let state = Mutex(State())
    private var thread: SystemThread?

    /// Subscribes to `filter` (QoS 1) and starts counting; throws when it cannot connect.
    public init(url: String, filter: String) throws {
        transport = try MosquittoTransport(options: MQTTConnectOptions(
            endpoint: try MQTTEndpoint(url: url),
            clientID: "load-counter-\(getpid())-\(UInt32.random(in: 0...UInt32.max))", sessionExpirySeconds: 0))
        try transport.connect()
        var connected = false
        for _ in 0..<100 where !connected {
            connected = transport.service(timeoutMillis: 50).events.contains { if case .connected = $0 { true } else { false } }
        }
        guard connected else { throw MQTTError.notConnected(clientID: "counting subscriber") }
        try transport.subscribe(filter, qos: .atLeastOnce)
        // Let the SUBACK arrive before the caller starts producing.
        _ = transport.service(timeoutMillis: 100)
        // Unretained, as deinit stops and joins the thread: a strong capture would keep the
        // counter alive forever.
        thread = try SystemThread.start(name: "broker-counter") { [unowned(unsafe) self] in self.loop() }
    }

    deinit {
        state.withLock { $0.running = false }
        thread?.join()
        transport.disconnect()
    }

    public var snapshot: Snapshot { state.withLock { $0.snapshot } }

    /// Polls every 20 ms until `condition` holds or `seconds` pass.
    public func wait(seconds: Double, until condition: (Snapshot) -> Bool) -> Bool {
        let deadline = Monotonic.seconds() + seconds
        while Monotonic.seconds() < deadline {
            if condition(snapshot) { return true }
            usleep(20_000)
        }
        return condition(snapshot)
    }

    private func loop() {
        while state.withLock({ $0.running }) {
            let (events, error) = transport.service(timeoutMillis: 20)
            // Without a connection libmosquitto returns at once: wait out the timeout instead.
            if error != nil { usleep(20_000) }
            for event in events {
                guard case .message(let message) = event else { continue }
                let sequence = Self.sequence(in: message.payload)
                let now = Monotonic.seconds()
                state.withLock { Self.count(sequence, at: now, into: &$0) }
            }
        }
    }

    private static func count(_ sequence: Int?, at now: Double, into state: inout State) {
        state.snapshot.messages += 1
        if state.snapshot.firstArrival == 0 { state.snapshot.firstArrival = now }
        state.snapshot.lastArrival = now
        guard let sequence, sequence > 0, sequence < 1 << 32 else { return }
        let word = sequence / 64, bit = UInt64(1) << UInt64(sequence % 64)
        if word >= state.seen.count { state.seen += [UInt64](repeating: 0, count: word + 1 - state.seen.count) }
        if state.seen[word] & bit != 0 {
            state.snapshot.duplicates += 1
        } else {
            state.seen[word] |= bit
            state.snapshot.distinctSequences += 1
            state.snapshot.highestSequence = max(state.snapshot.highestSequence, sequence)
        }
    }

    /// The top-level "seq" number of an event payload, without parsing the whole JSON.
    static func sequence(in payload: [UInt8]) -> Int? {
        let key = Array(#""seq":"#.utf8)
        guard payload.count > key.count else { return nil }
        for start in 0...(payload.count - key.count) where payload[start] == key[0] && payload[start..<(start + key.count)].elementsEqual(key) {
            var value = 0, index = start + key.count, digits = 0
            while index < payload.count, payload[index] >= 0x30, payload[index] <= 0x39, digits < 12 {
                value = value * 10 + Int(payload[index] - 0x30)
                index += 1
                digits += 1
            }
            return digits > 0 ? value : nil
        }
        return nil
    }
}
