// The shared world of simulated DW3000s: one virtual clock in integer picoseconds, a
// deterministic scheduler (time, then insertion order), and the channel that carries frames
// between chips. Single-threaded by design: tests and `--simulate` drive it from one thread.
import Protocol

public final class SimulatedUWBAir {
    /// Picoseconds per DTU (15.65 ps).
    public static let picosecondsPerUnit = 1e12 / UWBTimestamp.unitsPerSecond
    static let speedOfLight = 299_792_458.0

    public private(set) var nowPicoseconds: UInt64 = 0
    public var channel: UWBChannelModel
    var rng: SimulationRNG
    /// Chips belong to whoever drives them (a driver holds its chip); the air only reaches them.
    private var chipReferences: [WeakChip] = []
    public var chips: [SimulatedDW3000] { chipReferences.compactMap(\.chip) }
    /// Errors thrown by runners the scheduler drove (a test asserts this stays empty).
    public private(set) var runnerErrors: [String] = []
    /// Per-pair distance overrides, keyed by the two chip names in order.
    private var pairDistances: [String: UWBDistanceProfile] = [:]

    private struct Scheduled {
        var time: UInt64
        var sequence: UInt64
        var action: () -> Void
    }
    private var queue: [Scheduled] = []
    private var sequence: UInt64 = 0

    public init(seed: UInt64, channel: UWBChannelModel = UWBChannelModel()) {
        self.rng = SimulationRNG(seed: seed)
        self.channel = channel
    }

    public var nowSeconds: Double { Double(nowPicoseconds) / 1e12 }

    /// Adds a chip. `driftPPM` is its crystal's error (the DW3000 is specified to +-20 ppm);
    /// `startUnits` its counter at time zero (start near 2^40 to test the wrap).
    @discardableResult
    public func addChip(name: String, driftPPM: Double = 0, chipID: UInt32 = DW3000ChipID.dw3110.rawValue,
                        startUnits: UInt64 = 0) -> SimulatedDW3000 {
        let chip = SimulatedDW3000(air: self, name: name, driftPPM: driftPPM, chipID: chipID, startUnits: startUnits)
        chipReferences.removeAll { $0.chip == nil }
        chipReferences.append(WeakChip(chip: chip))
        return chip
    }

    public func setDistance(_ profile: UWBDistanceProfile, between a: SimulatedDW3000, _ b: SimulatedDW3000) {
        pairDistances[Self.pairKey(a, b)] = profile
    }

    public func distanceMetres(between a: SimulatedDW3000, _ b: SimulatedDW3000, atPicoseconds t: UInt64) -> Double {
        (pairDistances[Self.pairKey(a, b)] ?? channel.distance).metres(atSeconds: Double(t) / 1e12)
    }

    private static func pairKey(_ a: SimulatedDW3000, _ b: SimulatedDW3000) -> String {
        a.name < b.name ? "\(a.name)|\(b.name)" : "\(b.name)|\(a.name)"
    }

    // MARK: - Scheduler

    public func schedule(atPicoseconds time: UInt64, _ action: @escaping () -> Void) {
        sequence += 1
        let item = Scheduled(time: time, sequence: sequence, action: action)
        // Insertion keeps the queue sorted; it stays short (a few events per chip).
        let index = queue.firstIndex { ($0.time, $0.sequence) > (time, item.sequence) } ?? queue.endIndex
        queue.insert(item, at: index)
    }

    public func schedule(afterMicros micros: Double, _ action: @escaping () -> Void) {
        schedule(atPicoseconds: nowPicoseconds + UInt64(max(0, micros) * 1e6), action)
    }

    /// When the next event is due; nil when idle.
    public var nextEventPicoseconds: UInt64? { queue.first?.time }

    /// Runs the next event; false when there is none.
    @discardableResult
    public func step() -> Bool {
        guard !queue.isEmpty else { return false }
        let item = queue.removeFirst()
        // An event can fall behind `now` after a bring-up delay passed time without dispatching.
        nowPicoseconds = max(nowPicoseconds, item.time)
        item.action()
        return true
    }

    /// Runs events until none is left (or `limit` ran: a guard against a runaway loop).
    @discardableResult
    public func runUntilIdle(limit: Int = 1_000_000) -> Int {
        var count = 0
        while count < limit, step() { count += 1 }
        return count
    }

    /// Runs every event due within `micros`, then moves the clock to the end of the span.
    public func advance(byMicros micros: Double) {
        let end = nowPicoseconds + UInt64(max(0, micros) * 1e6)
        while let next = queue.first?.time, next <= end { step() }
        nowPicoseconds = max(nowPicoseconds, end)
    }

    /// Lets time pass without dispatching (the bring-up waits: nothing else runs meanwhile,
    /// exactly as a driver thread blocked in a delay).
    func elapse(micros: UInt32) {
        nowPicoseconds += UInt64(micros) * 1_000_000
    }

    // MARK: - Runners

    /// Drives `runner` from `chip`'s IRQ line: each rising edge schedules an interrupt service
    /// `latencyMicros` later (the GPIO edge, the wake-up, the SPI transactions of a real host).
    public func connect(_ runner: UWBRangingRunner, to chip: SimulatedDW3000, latencyMicros: Double = 30) {
        chip.onInterrupt = { [weak self, weak chip, weak runner] in
            guard let self, let chip, let runner else { return }
            self.scheduleService(runner, chip: chip, latencyMicros: latencyMicros)
        }
    }

    private func scheduleService(_ runner: UWBRangingRunner, chip: SimulatedDW3000, latencyMicros: Double) {
        schedule(afterMicros: latencyMicros) { [weak self, weak chip, weak runner] in
            guard let self, let chip, let runner else { return }
            do {
                try runner.serviceInterrupt()
            } catch {
                self.runnerErrors.append("\(chip.name): \(error)")
            }
            // A level-triggered line still high after service needs another visit.
            if chip.irqAsserted { self.scheduleService(runner, chip: chip, latencyMicros: latencyMicros) }
        }
    }

    /// A delay source for a driver on this air: bring-up waits pass virtual time.
    public func delay() -> any UWBDelay { SimulatedUWBDelay(air: self) }

    // MARK: - Channel

    /// Carries a frame whose RMARKER leaves `sender`'s antenna at `emitted` (true time, ps).
    func propagate(_ frame: UWBAirFrame, from sender: SimulatedDW3000, emittedAt emitted: Double) {
        for receiver in chips where receiver !== sender {
            if rng.chance(channel.packetLossProbability) { continue }
            // The receiver locks on the earliest path: the direct one when in range, else a
            // relay's; a relay therefore never shortens anything.
            let direct = distanceMetres(between: sender, receiver, atPicoseconds: UInt64(max(0, emitted)))
            var paths = direct <= channel.maximumRangeMetres ? [direct] : []
            for case .relay(let path, let processing) in channel.attacks {
                paths.append(path + processing * 1e-9 * Self.speedOfLight)
            }
            guard var metres = paths.min() else { continue }
            metres += channel.timestampNoiseMetres * rng.gaussian()
            if rng.chance(channel.nlosProbability) {
                metres += channel.nlosExtraMetres.lowerBound
                    + rng.uniform() * (channel.nlosExtraMetres.upperBound - channel.nlosExtraMetres.lowerBound)
            }
            var forged = false
            for case .earlyDetection(let probability, let advance) in channel.attacks where rng.chance(probability) {
                metres -= advance
                forged = true
            }
            let corrupted = rng.chance(channel.frameErrorProbability)
            let arrival = emitted + metres / Self.speedOfLight * 1e12
            var delivered = frame
            delivered.forgedFirstPath = forged
            delivered.corrupted = corrupted
            receiver.frameArrives(delivered, atPicoseconds: arrival)
        }
    }

    /// STS quality draws for the receiver: high when the STS correlates, low otherwise.
    func drawQuality(correlates: Bool) -> Double {
        correlates ? 0.85 + 0.1 * rng.uniform() : 0.05 + 0.25 * rng.uniform()
    }
}

/// A frame on air: what the sender's chip put in it.
struct UWBAirFrame {
    var sender: String
    var payload: [UInt8]
    /// The sender's STS key and IV counter state, nil when it sent no STS.
    var sts: [UInt8]?
    var stsLength: Int
    /// Set by the channel for the receiver's benefit.
    var forgedFirstPath = false
    var corrupted = false
}

private struct WeakChip {
    weak var chip: SimulatedDW3000?
}

final class SimulatedUWBDelay: UWBDelay {
    let air: SimulatedUWBAir
    init(air: SimulatedUWBAir) { self.air = air }
    func delay(micros: UInt32) { air.elapse(micros: micros) }
}
