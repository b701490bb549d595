// What the car's UWB module can do. The protocol bounds (RangingSetup) say what any car may be
// asked; these say what this car accepts. A car without a module has none (configuration nil)
// and answers every rangingSetup with `rangingUnsupported`.

public struct UWBCapabilities: Sendable, Equatable {
    public var channels: [UInt8] = RangingSetup.channels
    public var preambleCodes: ClosedRange<UInt8> = RangingSetup.preambleCodes
    public var stsLengths: [UInt8] = RangingSetup.stsLengths
    /// The shortest reply the car can schedule reliably: it must receive the Poll, read its
    /// timestamp and program the delayed Response in that time (a Linux host over SPI needs
    /// far more than a microcontroller).
    public var minReplyDelayMicros: UInt16 = 1000
    /// The most frequent rounds the car will run (radio time is shared by all links).
    public var minRoundIntervalMillis: UInt16 = 50

    public init() {}

    /// Throws `unsupported` for the first value this car cannot use.
    public func check(_ setup: RangingSetup) throws(RangingSetupError) {
        guard channels.contains(setup.channel) else { throw .unsupported("channel \(setup.channel) on this car") }
        guard preambleCodes.contains(setup.preambleCode) else { throw .unsupported("preamble code \(setup.preambleCode) on this car") }
        guard stsLengths.contains(setup.stsLength) else { throw .unsupported("STS length \(setup.stsLength) on this car") }
        guard setup.replyDelayMicros >= minReplyDelayMicros else { throw .unsupported("reply delay below \(minReplyDelayMicros) us") }
        guard setup.roundIntervalMillis >= minRoundIntervalMillis else {
            throw .unsupported("round interval below \(minRoundIntervalMillis) ms")
        }
    }
}
