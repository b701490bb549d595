// The board file's optional "uwb" object: where the DW3000 module sits (spidev node, interrupt
// line) and the radio settings that belong to the board's antenna and layout (channel,
// preamble code, antenna delays). Absent: the car has no UWB module and decides without
// distance (docs/protocol.md 19; board/README.md "UWB module").

public struct BoardUWB: Sendable, Equatable {
    public static let channels: [UInt8] = [5, 9]
    /// Preamble codes for 64 MHz PRF (IEEE 802.15.4z): 9 to 12.
    public static let preambleCodes: ClosedRange<UInt8> = 9...12
    public static let stsLengths: [UInt16] = [32, 64, 128]
    /// The DW3000 runs its SPI up to 38 MHz once the PLL is locked; Pi controllers are
    /// reliable to about 20 MHz on short wires.
    public static let spiHertzRange: ClosedRange<UInt32> = 1_000_000...38_000_000

    /// "/dev/spidevB.C" (a Pi's SPI0 with CE0 is /dev/spidev0.0).
    public var spidev: String
    /// The chip's IRQ output; nil: the driver polls SYS_STATUS instead.
    public var interrupt: GPIOLineConfig?
    public var channel: UInt8
    public var preambleCode: UInt8
    public var stsLength: UInt16
    /// Antenna delays in DTU (calibrated per board; 16385 is the usual uncalibrated start).
    public var txAntennaDelay: UInt16
    public var rxAntennaDelay: UInt16
    /// The SPI clock after the PLL has locked.
    public var spiHertz: UInt32

    public init(spidev: String, interrupt: GPIOLineConfig? = nil, channel: UInt8 = 9, preambleCode: UInt8 = 9,
                stsLength: UInt16 = 64, txAntennaDelay: UInt16 = 16385, rxAntennaDelay: UInt16 = 16385,
                spiHertz: UInt32 = 20_000_000) {
        self.spidev = spidev
        self.interrupt = interrupt
        self.channel = channel
        self.preambleCode = preambleCode
        self.stsLength = stsLength
        self.txAntennaDelay = txAntennaDelay
        self.rxAntennaDelay = rxAntennaDelay
        self.spiHertz = spiHertz
    }
}
