// The DW3000 driver's core: register access over an `SPIDevice` with every transaction counted.
// Bring-up, operation and interrupt service are extensions in their own files.
import Protocol

public final class DW3000Driver {
    public let spi: any SPIDevice
    public let configuration: DW3000Configuration
    let delay: any UWBDelay

    /// The part found at bring-up; nil until `bringUp()` succeeds.
    public internal(set) var chip: DW3000ChipID?
    public internal(set) var otp = DW3000OTPValues()
    public internal(set) var counters = DW3000Counters()
    /// Receive errors since the last good frame; at `consecutiveErrorsBeforeReset` the chip is reset.
    var consecutiveErrors = 0
    /// The last STS material, reloaded after a recovery reset, and compared so an unchanged
    /// key and IV prefix costs only the 4-byte counter write.
    var loadedSTS: (key: [UInt8], iv: [UInt8])?
    /// SYS_ENABLE: the interrupts the driver services.
    public static let interruptMask: UInt32 = DW3000Status.txFrameSent | DW3000Status.rxFrameGood
        | DW3000Status.rxErrors | DW3000Status.rxTimeouts

    /// Validates the configuration; nothing touches the bus until `bringUp()`.
    public init(spi: any SPIDevice, configuration: DW3000Configuration = DW3000Configuration(),
                delay: any UWBDelay = SleepingUWBDelay()) throws(DW3000Error) {
        try configuration.validate()
        self.spi = spi
        self.configuration = configuration
        self.delay = delay
    }

    public var snapshot: DW3000Snapshot {
        DW3000Snapshot(chip: chip, channel: configuration.channel, preambleCode: configuration.preambleCode,
                       preambleLength: configuration.preambleLength, stsEnabled: configuration.stsEnabled,
                       stsLength: configuration.stsLength, txAntennaDelay: configuration.txAntennaDelay,
                       rxAntennaDelay: configuration.rxAntennaDelay, xtalTrim: otp.xtalTrim,
                       spiHertz: spi.clockHertz, counters: counters)
    }

    // MARK: - Transactions

    func transfer(_ write: [UInt8], readCount: Int = 0) throws(DW3000Error) -> [UInt8] {
        counters.spiTransactions += 1
        counters.spiBytesOut += write.count
        counters.spiBytesIn += readCount
        let data: [UInt8]
        do {
            data = try spi.transfer(write: write, readCount: readCount)
        } catch {
            throw .spi(error)
        }
        // Never trust a backend's length: parsing below assumes exactly `readCount` bytes.
        if data.count == readCount { return data }
        return Array((data + [UInt8](repeating: 0, count: readCount)).prefix(readCount))
    }

    func read(_ register: DW3000Register, count: Int? = nil) throws(DW3000Error) -> [UInt8] {
        try transfer(DW3000Header.read(register), readCount: count ?? register.length)
    }

    func read32(_ register: DW3000Register) throws(DW3000Error) -> UInt32 {
        LittleEndian.value(try read(register, count: 4))
    }

    func write(_ register: DW3000Register, _ bytes: [UInt8]) throws(DW3000Error) {
        _ = try transfer(DW3000Header.write(register) + bytes)
    }

    func write<T: FixedWidthInteger>(_ register: DW3000Register, value: T) throws(DW3000Error) {
        try write(register, LittleEndian.bytes(value, count: min(register.length, MemoryLayout<T>.size)))
    }

    /// Read-modify-write done by the chip in one transaction: value = (value & and) | or.
    func modify(_ register: DW3000Register, _ access: DW3000Access, and: UInt32, or: UInt32) throws(DW3000Error) {
        let width = access.maskWidth
        _ = try transfer(DW3000Header.write(register, access: access)
            + LittleEndian.bytes(and, count: width) + LittleEndian.bytes(or, count: width))
    }

    func command(_ command: DW3000FastCommand) throws(DW3000Error) {
        _ = try transfer([command.byte])
    }

    /// Clears SYS_STATUS bits (write 1 to clear).
    func clearStatus(_ bits: UInt32) throws(DW3000Error) {
        try write(.sysStatus, value: bits)
    }

    func setClock(_ hertz: UInt32) throws(DW3000Error) {
        do {
            try spi.setClock(hertz: hertz)
        } catch {
            throw .spi(error)
        }
    }

    /// The TX timestamp a delayed transmission at `at` will report: the chip ignores DX_TIME
    /// bit 0 (so the low 9 bits of the time), then adds the TX antenna delay.
    public static func transmitTime(at: UWBTimestamp, txAntennaDelay: UInt16) -> UWBTimestamp {
        UWBTimestamp((at.rawValue >> 8 & ~1) << 8).adding(units: UInt64(txAntennaDelay))
    }

    public func transmitTime(at: UWBTimestamp) -> UWBTimestamp {
        Self.transmitTime(at: at, txAntennaDelay: configuration.txAntennaDelay)
    }
}

/// The calibration values read from OTP at bring-up.
public struct DW3000OTPValues: Sendable, Equatable {
    public var ldoLow: UInt32 = 0
    public var ldoHigh: UInt32 = 0
    public var bias: UInt32 = 0
    public var dgc: UInt32 = 0
    public var pll: UInt32 = 0
    /// The crystal trim in use (0x2E when OTP was blank).
    public var xtalTrim: UInt8 = 0

    public init() {}
}
