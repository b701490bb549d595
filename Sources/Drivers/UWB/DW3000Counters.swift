// Counters for the console's `uwb` command and the benchmarks: what the bus carried and what the
// radio reported, so a field engineer can tell a noisy channel from a wiring fault.

public struct DW3000Counters: Sendable, Equatable {
    public var spiTransactions = 0
    /// Bytes clocked out (headers and data) and in (data read).
    public var spiBytesOut = 0
    public var spiBytesIn = 0
    public var framesSent = 0
    public var framesReceived = 0
    /// Receive errors by kind ("PHR", "FCS", "sync loss", "SFD timeout", "CIA", "STS preamble", "frame rejected").
    public var receiveErrors: [String: Int] = [:]
    public var receiveTimeouts = 0
    /// Frames received with STS quality below the threshold or TOAST set.
    public var stsInvalid = 0
    public var lateTransmits = 0
    /// Resets after bring-up (the recovery after consecutive receive errors).
    public var resets = 0

    public init() {}

    public var totalReceiveErrors: Int { receiveErrors.values.reduce(0, +) }
}

/// What `uwb` prints: the chip, its settings and the counters.
public struct DW3000Snapshot: Sendable, Equatable, CustomStringConvertible {
    public var chip: DW3000ChipID?
    public var channel: UWBChannel
    public var preambleCode: UInt8
    public var preambleLength: Int
    public var stsEnabled: Bool
    public var stsLength: Int
    public var txAntennaDelay: UInt16
    public var rxAntennaDelay: UInt16
    public var xtalTrim: UInt8
    public var spiHertz: UInt32
    public var counters: DW3000Counters

    public var description: String {
        var lines = [
            "chip \(chip.map { "\($0)" } ?? "not brought up"), channel \(channel.rawValue), preamble code \(preambleCode) "
                + "length \(preambleLength), STS \(stsEnabled ? "\(stsLength) symbols" : "off"), SPI \(spiHertz / 1000) kHz",
            "antenna delay TX \(txAntennaDelay) RX \(rxAntennaDelay) DTU, XTAL trim 0x\(dwHex(xtalTrim, 2))",
            "SPI \(counters.spiTransactions) transactions, \(counters.spiBytesOut) bytes out, \(counters.spiBytesIn) bytes in",
            "frames sent \(counters.framesSent), received \(counters.framesReceived), STS invalid \(counters.stsInvalid), "
                + "timeouts \(counters.receiveTimeouts), late TX \(counters.lateTransmits), resets \(counters.resets)",
        ]
        let errors = counters.receiveErrors.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }
        lines.append("receive errors: " + (errors.isEmpty ? "none" : errors.joined(separator: ", ")))
        return lines.joined(separator: "\n")
    }
}
