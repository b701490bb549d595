// BLE signal strength for one key: when to start UWB ranging, and whether the UWB distance is
// believable. A relay that shortens UWB but carries BLE unamplified (or the reverse) leaves the
// two radios disagreeing; a phone at arm's length is never 90 dB down.

/// What an RSSI sample asks the agent to do.
public enum RangingWake: Sendable, Equatable {
    /// The key is close enough that UWB ranging is worth its power.
    case startRanging
    /// Not yet (weak, or not a number).
    case stayIdle
}

struct RSSIMonitor: Sendable, Equatable {
    /// Smoothed RSSI in dBm and the time of its last sample (nil: never heard).
    private(set) var smoothed: Double?
    private(set) var lastMillis: UInt64?

    /// Takes one sample. Non-finite samples are dropped: a driver glitch must neither wake the
    /// radio nor mark a key implausible.
    mutating func observe(_ rssi: Double, atMillis now: UInt64,
                          configuration: ProximityConfiguration) -> RangingWake {
        guard rssi.isFinite else { return .stayIdle }
        // A stale average says nothing about now; restart it from this sample.
        if let previous = smoothed, let last = lastMillis, now >= last,
           now - last <= configuration.rssiFreshMillis {
            let weight = configuration.rssiSmoothing
            smoothed = previous + weight * (rssi - previous)
        } else {
            smoothed = rssi
        }
        lastMillis = now
        return rssi > configuration.wakeRSSI ? .startRanging : .stayIdle
    }

    /// The smoothed RSSI if recent enough to judge by (nil: not available, which blocks nothing).
    func current(atMillis now: UInt64, configuration: ProximityConfiguration) -> Double? {
        guard let value = smoothed, let last = lastMillis else { return nil }
        let age = now >= last ? now - last : 0
        return age <= configuration.rssiFreshMillis ? value : nil
    }

    /// False when UWB puts the key close but BLE is far too weak for that distance.
    func isPlausible(distance: Double?, atMillis now: UInt64,
                     configuration: ProximityConfiguration) -> Bool {
        guard let distance, let rssi = current(atMillis: now, configuration: configuration) else { return true }
        if distance < configuration.plausibilityDistanceMetres && rssi < configuration.rssiPlausibilityFloor {
            return false
        }
        return true
    }
}
