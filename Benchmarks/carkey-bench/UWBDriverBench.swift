// carkey-bench uwb: the cost of one DS-TWR round on the path the car really takes: the
// DSTWRResponder role (car) and DSTWRInitiator (phone) driven through DW3000Driver and
// UWBRangingRunner over two register-level simulated DW3000s on one simulated air. Reported:
// SPI transactions and bytes per round on the car's chip (what a real host pays over spidev),
// and thread CPU per round against a reference measured in the same run: the two roles alone
// over an ideal radio (their frames, tags and arithmetic; no driver, no simulator).
#if canImport(Glibc)
import Glibc
#endif
import Drivers
import Protocol

enum UWBDriverBench {
    static let rounds = 2000
    static let rangingRounds = 5

    /// Deterministic randomness for the reply jitter (the bench must be repeatable).
    struct CountingRandom: RandomSource {
        func randomBytes(_ count: Int) throws -> Bytes { (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) } }
    }

    static func run() throws {
        let setup = try RangingSetup(sessionID: 0x1234_5678, roundIntervalMillis: 50)
        let material = RangingMaterial(rangingKey: Bytes(repeating: 0x42, count: 32), setup: setup)
        var cpuDriver: [Double] = []
        var cpuReference: [Double] = []
        var perRound: (transactions: Double, out: Double, in: Double, frames: Double) = (0, 0, 0, 0)
        var ranges = 0
        var distances: [Double] = []
        for _ in 0..<rangingRounds {
            let reference = referenceRoundCPU(material: material)
            cpuReference.append(reference)
            let result = try driverRounds(material: material)
            cpuDriver.append(result.cpuPerRound)
            perRound = result.perRound
            ranges = result.ranges
            distances = result.distances
        }
        let mean = distances.reduce(0, +) / Double(max(1, distances.count))
        Bench.emit([
            ("benchmark", "uwb_round"),
            ("path", "DSTWRResponder (car) + DSTWRInitiator (phone) through DW3000Driver and UWBRangingRunner on two register-level simulated DW3000s (SimulatedUWBAir, 1.5 m, +-15 ppm), \(rounds) rounds per run; reference: the same two roles over an ideal radio, same run, thread CPU"),
            ("rounds", rounds), ("ranges", ranges), ("mean_distance_m", mean),
            ("car_spi_transactions_per_round", perRound.transactions),
            ("car_spi_bytes_out_per_round", perRound.out), ("car_spi_bytes_in_per_round", perRound.in),
            ("car_frames_per_round", perRound.frames),
            ("cpu_us_per_round_min", (cpuDriver.min() ?? 0) * 1e6), ("cpu_us_per_round_median", Bench.median(cpuDriver) * 1e6),
            ("reference_cpu_us_per_round_median", Bench.median(cpuReference) * 1e6),
            ("ratio_min", (cpuDriver.min() ?? 0) / max(1e-12, cpuReference.min() ?? 1)),
            ("ratio_median", Bench.median(cpuDriver) / max(1e-12, Bench.median(cpuReference))),
            ("note", "CPU includes the simulator (both chips) and the phone's driver; on a Pi each spidev ioctl costs about 16 us (dw3000.md 5), so the car's transactions bound the host time per round"),
        ])
    }

    private struct Result {
        var cpuPerRound: Double
        var perRound: (transactions: Double, out: Double, in: Double, frames: Double)
        var ranges: Int
        var distances: [Double]
    }

    private static func driverRounds(material: RangingMaterial) throws -> Result {
        var channel = UWBChannelModel(distance: .fixed(metres: 1.5), timestampNoiseMetres: 0.02)
        channel.packetLossProbability = 0
        let air = SimulatedUWBAir(seed: 7, channel: channel)
        let carChip = air.addChip(name: "car", driftPPM: 15)
        let phoneChip = air.addChip(name: "phone", driftPPM: -15)
        carChip.traceCapacity = 0
        phoneChip.traceCapacity = 0
        let configuration = DW3000Configuration()
        let car = try DW3000Driver(spi: carChip, configuration: configuration, delay: air.delay())
        let phone = try DW3000Driver(spi: phoneChip, configuration: configuration, delay: air.delay())
        _ = try car.bringUp()
        _ = try phone.bringUp()
        let carRunner = UWBRangingRunner(driver: car, role: DSTWRResponder(material: material, random: CountingRandom()))
        let phoneRunner = UWBRangingRunner(driver: phone, role: DSTWRInitiator(material: material, txAntennaDelayUnits: configuration.txAntennaDelay,
                                                                              random: CountingRandom()))
        air.connect(carRunner, to: carChip)
        air.connect(phoneRunner, to: phoneChip)
        let before = car.counters
        var ranges = 0
        var distances: [Double] = []
        let cpu = Bench.cpuSeconds {
            for _ in 0..<rounds {
                do {
                    try carRunner.startRound()
                    try phoneRunner.startRound()
                } catch {
                    continue
                }
                air.runUntilIdle(limit: 10_000)
                if case .range(let range)? = carRunner.lastOutcome {
                    ranges += 1
                    distances.append(range.distanceMetres)
                }
                air.advance(byMicros: 50_000)
            }
        }
        let after = car.counters
        let n = Double(rounds)
        return Result(cpuPerRound: cpu / n,
                      perRound: (Double(after.spiTransactions - before.spiTransactions) / n, Double(after.spiBytesOut - before.spiBytesOut) / n,
                                 Double(after.spiBytesIn - before.spiBytesIn) / n,
                                 Double(after.framesSent + after.framesReceived - before.framesSent - before.framesReceived) / n),
                      ranges: ranges, distances: distances)
    }

    /// The two roles alone: Poll, Response and Final passed by hand with exact timestamps (one
    /// shared timebase, 1.5 m), so only the roles' own work is timed.
    private static func referenceRoundCPU(material: RangingMaterial) -> Double {
        var initiator = DSTWRInitiator(material: material, txAntennaDelayUnits: 16385, random: CountingRandom())
        var responder = DSTWRResponder(material: material, random: CountingRandom())
        let tof: UInt64 = 320   // 1.5 m in DTU
        var start: UInt64 = 1_000_000
        var ranges = 0
        let cpu = Bench.cpuSeconds {
            for _ in 0..<rounds {
                let a0 = initiator.startRound()
                _ = responder.startRound()
                guard case .transmit(let poll, nil, _)? = a0.last else { continue }
                _ = initiator.handle(.transmitted(timestamp: UWBTimestamp(start)))
                let b1 = responder.handle(.received(payload: poll, timestamp: UWBTimestamp(start + tof), stsQuality: 0.9, stsValid: true))
                guard case .transmit(let response, let at?, _)? = b1.first else { continue }
                let responseTx = RangingTiming.actualTransmitTime(programmed: at, antennaDelayUnits: 16385)
                _ = responder.handle(.transmitted(timestamp: responseTx))
                let a1 = initiator.handle(.received(payload: response, timestamp: responseTx.adding(units: tof), stsQuality: 0.9, stsValid: true))
                guard case .transmit(let final, let finalAt?, nil)? = a1.first else { continue }
                let finalTx = RangingTiming.actualTransmitTime(programmed: finalAt, antennaDelayUnits: 16385)
                _ = initiator.handle(.transmitted(timestamp: finalTx))
                let b2 = responder.handle(.received(payload: final, timestamp: finalTx.adding(units: tof), stsQuality: 0.9, stsValid: true))
                if b2.contains(where: { if case .finished(.range) = $0 { return true } else { return false } }) { ranges += 1 }
                start &+= 3_195_000_000   // the next round 50 ms later
            }
        }
        precondition(ranges == rounds, "the reference roles did not range (\(ranges) of \(rounds)): the bench would compare nothing")
        return cpu / Double(rounds)
    }
}
