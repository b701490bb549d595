// The seed's scalar Kalman filter, kept verbatim as the baseline the engine's filter must beat
// (benchmark and tests). It models the distance as a random walk, one step per measurement,
// whatever the time between them, and has no outlier handling.

public struct SeedKalman1D: Sendable, Equatable {
    public let processNoise: Double
    public let measurementNoise: Double
    public private(set) var estimate: Double
    public private(set) var errorCovariance: Double

    /// The seed's values: q = 0.01, r = 0.1, starting from 0 with covariance 1.
    public init(processNoise: Double = 0.01, measurementNoise: Double = 0.1,
                estimate: Double = 0, errorCovariance: Double = 1) {
        self.processNoise = processNoise
        self.measurementNoise = measurementNoise
        self.estimate = estimate
        self.errorCovariance = errorCovariance
    }

    /// One predict/update step; returns the new estimate.
    @discardableResult
    public mutating func update(_ measurement: Double) -> Double {
        errorCovariance += processNoise
        let gain = errorCovariance / (errorCovariance + measurementNoise)
        estimate += gain * (measurement - estimate)
        errorCovariance = (1 - gain) * errorCovariance
        return estimate
    }
}
