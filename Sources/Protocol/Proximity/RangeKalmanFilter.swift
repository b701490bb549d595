// Constant-velocity Kalman filter on [distance, radial velocity] for UWB ranges.
// Why not the seed's scalar filter: a walking person moves 5-7 cm between rounds at 20 Hz, so
// a random-walk model either lags (small q) or passes the noise through (large q); modelling
// velocity removes the lag. Steps use the real time between ranges (rounds get lost, so the
// intervals are irregular), process noise comes from an acceleration spectral density (the
// discretised white-noise-acceleration model), and an innovation gate drops lone outliers
// (NLOS spikes) while a consistent run of them is taken as a real jump.

public struct RangeKalmanFilter: Sendable, Equatable {
    /// What one range did to the track.
    public enum Outcome: Sendable, Equatable {
        /// First range, or the first after a gap longer than the reset bound: the track starts here.
        case initialised
        /// Inside the gate: the track moved towards it.
        case accepted
        /// Outside the gate: ignored (the prediction still advanced to its time).
        case rejected
        /// Enough consistent outliers in a row: the track restarted at this range.
        case reinitialised
        /// Older than the track, or not a finite number: nothing changed.
        case ignored
    }

    public let configuration: ProximityConfiguration

    /// Filtered distance and velocity at `lastMillis` (nil before the first range).
    public private(set) var distance: Double?
    public private(set) var velocity: Double = 0
    public private(set) var lastMillis: UInt64?
    public private(set) var consecutiveRejections = 0

    // Covariance [[p00, p01], [p01, p11]].
    private var p00 = 0.0, p01 = 0.0, p11 = 0.0
    // Spread of the current run of outliers (for the jump-consistency check).
    private var outlierLow = 0.0, outlierHigh = 0.0

    public init(configuration: ProximityConfiguration = ProximityConfiguration()) {
        self.configuration = configuration
    }

    /// Standard deviation of the filtered distance (nil before the first range).
    public var distanceSigma: Double? { distance == nil ? nil : p00.squareRoot() }

    /// Forgets the track (the next range initialises it).
    public mutating func reset() {
        distance = nil
        velocity = 0
        lastMillis = nil
        consecutiveRejections = 0
    }

    /// Feeds one range measured at `atMillis`.
    public mutating func update(measurement z: Double, atMillis now: UInt64) -> Outcome {
        guard z.isFinite else { return .ignored }
        guard let last = lastMillis, let x = distance else {
            start(at: z, now: now)
            return .initialised
        }
        guard now >= last else { return .ignored }
        // Predicting across a long gap would only inflate the covariance to meaninglessness;
        // starting over is both simpler and what the data supports.
        guard now - last <= configuration.filterResetGapMillis else {
            start(at: z, now: now)
            return .initialised
        }
        predict(from: x, seconds: Double(now - last) / 1000)
        lastMillis = now

        let r = configuration.measurementSigmaMetres * configuration.measurementSigmaMetres
        let predicted = distance ?? z
        let innovation = z - predicted
        let s = p00 + r
        let normalised = innovation * innovation / s
        if normalised.isFinite, normalised <= configuration.innovationGate {
            consecutiveRejections = 0
            let k0 = p00 / s, k1 = p01 / s
            distance = predicted + k0 * innovation
            velocity += k1 * innovation
            let n00 = (1 - k0) * p00, n01 = (1 - k0) * p01, n11 = p11 - k1 * p01
            (p00, p01, p11) = (n00, n01, n11)
            if !isHealthy { start(at: z, now: now) }
            return .accepted
        }
        return reject(z, now: now)
    }

    private mutating func reject(_ z: Double, now: UInt64) -> Outcome {
        if consecutiveRejections == 0 {
            (outlierLow, outlierHigh) = (z, z)
        } else {
            (outlierLow, outlierHigh) = (min(outlierLow, z), max(outlierHigh, z))
        }
        consecutiveRejections += 1
        // Scattered outliers are noise (or an attacker guessing); only a run that agrees with
        // itself is a real change of distance. A scattered run starts over from this range.
        if outlierHigh - outlierLow > configuration.jumpConsistencyMetres {
            (outlierLow, outlierHigh) = (z, z)
            consecutiveRejections = 1
        }
        if consecutiveRejections > configuration.maxConsecutiveRejections {
            start(at: z, now: now)
            return .reinitialised
        }
        if !isHealthy { start(at: z, now: now) }
        return .rejected
    }

    private mutating func start(at z: Double, now: UInt64) {
        let sigma = configuration.measurementSigmaMetres
        let velocitySigma = configuration.initialVelocitySigma
        distance = z
        velocity = 0
        p00 = sigma * sigma
        p01 = 0
        p11 = velocitySigma * velocitySigma
        lastMillis = now
        consecutiveRejections = 0
    }

    private mutating func predict(from x: Double, seconds dt: Double) {
        let q = configuration.accelerationSpectralDensity
        let dt2 = dt * dt, dt3 = dt2 * dt
        distance = x + dt * velocity
        let n00 = p00 + 2 * dt * p01 + dt2 * p11 + q * dt3 / 3
        let n01 = p01 + dt * p11 + q * dt2 / 2
        let n11 = p11 + q * dt
        (p00, p01, p11) = (n00, n01, n11)
    }

    /// A covariance that lost positivity or finiteness (it cannot with sane inputs, but the
    /// filter must never hand a NaN to a security decision).
    private var isHealthy: Bool {
        guard let d = distance, d.isFinite, velocity.isFinite,
              p00.isFinite, p01.isFinite, p11.isFinite else { return false }
        return p00 > 0 && p11 > 0 && p00 * p11 - p01 * p01 >= -1e-12
    }
}
