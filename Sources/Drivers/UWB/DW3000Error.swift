// Typed DW3000 failures; each says what to check, since most happen at bring-up on a new board.

public enum DW3000Error: Error, Equatable, Sendable, CustomStringConvertible {
    case spi(SPIError)
    /// DEV_ID read as all ones or all zeros.
    case noChipAnswering(read: UInt32)
    /// DEV_ID is not a part this driver knows.
    case unknownDevice(id: UInt32)
    /// RCINIT never set after the soft reset.
    case resetDidNotComplete(polls: Int)
    /// CP_LOCK never set after AINIT2IDLE.
    case pllDidNotLock(polls: Int)
    /// RX_CAL_STS never read 1.
    case rxCalibrationTimedOut(polls: Int)
    case invalidConfiguration(String)
    /// A payload that does not fit one frame (TXFLEN is 10 bits and includes the 2-byte FCS).
    case payloadTooLarge(Int)
    /// STS key and IV must be 16 bytes each.
    case invalidSTSMaterial(keyBytes: Int, ivBytes: Int)
    /// An operation before `bringUp()` succeeded.
    case notReady

    public var description: String {
        switch self {
        case .spi(let error):
            return "DW3000: \(error)"
        case .noChipAnswering(let read):
            return "DW3000: no chip answering (DEV_ID read 0x\(dwHex(read, 8))): check wiring, chip select, SPI clock "
                + "(at most 7 MHz before bring-up), power and the reset line"
        case .unknownDevice(let id):
            return "DW3000: unknown DEV_ID 0x\(dwHex(id, 8)) (expected a DW3110/DW3120/QM33110/QM33120, 0xDECA03xx); "
                + "a shifted value means the SPI mode or clock is wrong"
        case .resetDidNotComplete(let polls):
            return "DW3000: RCINIT not set after the soft reset (\(polls) polls): the chip did not reach IDLE_RC; "
                + "try a 1 MHz SPI clock during bring-up and check the reset line and supply"
        case .pllDidNotLock(let polls):
            return "DW3000: PLL did not lock (CP_LOCK not set after \(polls) polls): check the crystal, XTAL trim "
                + "and the PLL configuration for the channel"
        case .rxCalibrationTimedOut(let polls):
            return "DW3000: RX calibration did not finish (RX_CAL_STS not 1 after \(polls) polls)"
        case .invalidConfiguration(let reason):
            return "DW3000: invalid configuration: \(reason)"
        case .payloadTooLarge(let count):
            return "DW3000: payload of \(count) bytes does not fit one frame (at most 1021 plus FCS)"
        case .invalidSTSMaterial(let key, let iv):
            return "DW3000: STS key and IV must be 16 bytes each (got \(key) and \(iv))"
        case .notReady:
            return "DW3000: not brought up (call bringUp() first)"
        }
    }
}
