// The DW3000 registers this driver touches, as (file, offset, length). File and offset come from
// shared/reference/dw3000.md; the few it does not list (RX_FWTO, DTUNE0/3, TX_CTRL_HI, PLL_CFG,
// CLK_CTRL, RX_CAL) carry the user-manual positions and are marked so.

public struct DW3000Register: Hashable, Sendable, CustomStringConvertible {
    public let name: String
    /// Register file (5 bits, 0x00...0x1F).
    public let file: UInt8
    /// Byte offset inside the file (7 bits in a full header).
    public let offset: UInt16
    /// Bytes the driver reads or writes.
    public let length: Int

    public init(_ name: String, file: UInt8, offset: UInt16, length: Int) {
        self.name = name
        self.file = file
        self.offset = offset
        self.length = length
    }

    public var description: String { "\(name) \(dwHex(file, 2)):\(dwHex(offset, 2))" }

    // File 0x00: general configuration and status.
    public static let devID = DW3000Register("DEV_ID", file: 0x00, offset: 0x00, length: 4)
    public static let sysCfg = DW3000Register("SYS_CFG", file: 0x00, offset: 0x10, length: 4)
    public static let sysTime = DW3000Register("SYS_TIME", file: 0x00, offset: 0x1C, length: 4)
    public static let txFctrl = DW3000Register("TX_FCTRL", file: 0x00, offset: 0x24, length: 4)
    public static let finePlen = DW3000Register("FINE_PLEN", file: 0x00, offset: 0x29, length: 1)
    public static let dxTime = DW3000Register("DX_TIME", file: 0x00, offset: 0x2C, length: 4)
    /// Frame wait timeout, 20 bits in UWB microseconds (512/499.2 us) (user manual position).
    public static let rxFwto = DW3000Register("RX_FWTO", file: 0x00, offset: 0x34, length: 4)
    public static let sysEnable = DW3000Register("SYS_ENABLE", file: 0x00, offset: 0x3C, length: 4)
    public static let sysStatus = DW3000Register("SYS_STATUS", file: 0x00, offset: 0x44, length: 4)
    public static let rxFinfo = DW3000Register("RX_FINFO", file: 0x00, offset: 0x4C, length: 4)
    public static let rxTime = DW3000Register("RX_TIME", file: 0x00, offset: 0x64, length: 5)
    public static let txTime = DW3000Register("TX_TIME", file: 0x00, offset: 0x74, length: 5)
    // File 0x01.
    public static let txAntd = DW3000Register("TX_ANTD", file: 0x01, offset: 0x04, length: 2)
    public static let chanCtrl = DW3000Register("CHAN_CTRL", file: 0x01, offset: 0x14, length: 4)
    // File 0x02: STS.
    public static let stsCfg0 = DW3000Register("STS_CFG0", file: 0x02, offset: 0x00, length: 1)
    public static let stsCtrl = DW3000Register("STS_CTRL", file: 0x02, offset: 0x04, length: 1)
    public static let stsSts = DW3000Register("STS_STS", file: 0x02, offset: 0x08, length: 2)
    public static let stsKey = DW3000Register("STS_KEY", file: 0x02, offset: 0x0C, length: 16)
    public static let stsIV = DW3000Register("STS_IV", file: 0x02, offset: 0x1C, length: 16)
    // File 0x04: RX calibration (RX_CAL is the user-manual position).
    public static let rxCal = DW3000Register("RX_CAL", file: 0x04, offset: 0x0C, length: 4)
    public static let rxCalSts = DW3000Register("RX_CAL_STS", file: 0x04, offset: 0x20, length: 1)
    // File 0x06: receiver tuning (user-manual positions).
    public static let dtune0 = DW3000Register("DTUNE0", file: 0x06, offset: 0x00, length: 2)
    public static let dtune3 = DW3000Register("DTUNE3", file: 0x06, offset: 0x0C, length: 4)
    public static let drxDiag3 = DW3000Register("DRX_DIAG3", file: 0x06, offset: 0x29, length: 3)
    // File 0x07 and 0x09: RF and PLL (TX_CTRL_HI, PLL_CFG: user-manual positions).
    public static let txCtrlHi = DW3000Register("TX_CTRL_HI", file: 0x07, offset: 0x1C, length: 4)
    public static let pllCfg = DW3000Register("PLL_CFG", file: 0x09, offset: 0x00, length: 2)
    public static let xtal = DW3000Register("XTAL", file: 0x09, offset: 0x14, length: 1)
    // File 0x0B: OTP.
    public static let otpAddr = DW3000Register("OTP_ADDR", file: 0x0B, offset: 0x04, length: 2)
    public static let otpCfg = DW3000Register("OTP_CFG", file: 0x0B, offset: 0x08, length: 2)
    public static let otpRdata = DW3000Register("OTP_RDATA", file: 0x0B, offset: 0x10, length: 4)
    // File 0x0C and 0x0E: CIA.
    public static let stsToaHi = DW3000Register("STS_TOA_HI", file: 0x0C, offset: 0x0C, length: 4)
    public static let ciaConf = DW3000Register("CIA_CONF", file: 0x0E, offset: 0x00, length: 2)
    // File 0x0F and 0x11: state and control.
    public static let sysStateLo = DW3000Register("SYS_STATE_LO", file: 0x0F, offset: 0x30, length: 4)
    public static let softRst = DW3000Register("SOFT_RST", file: 0x11, offset: 0x00, length: 1)
    public static let clkCtrl = DW3000Register("CLK_CTRL", file: 0x11, offset: 0x04, length: 1)
    public static let seqCtrl = DW3000Register("SEQ_CTRL", file: 0x11, offset: 0x08, length: 4)
    // Buffers: 1024 bytes each.
    public static let rxBuffer0 = DW3000Register("RX_BUFFER_0", file: 0x12, offset: 0x00, length: 1024)
    public static let rxBuffer1 = DW3000Register("RX_BUFFER_1", file: 0x13, offset: 0x00, length: 1024)
    public static let txBuffer = DW3000Register("TX_BUFFER", file: 0x14, offset: 0x00, length: 1024)

    /// Every register above, for the simulator's name lookup and its reset defaults.
    public static let all: [DW3000Register] = [
        devID, sysCfg, sysTime, txFctrl, finePlen, dxTime, rxFwto, sysEnable, sysStatus, rxFinfo, rxTime, txTime,
        txAntd, chanCtrl, stsCfg0, stsCtrl, stsSts, stsKey, stsIV, rxCal, rxCalSts, dtune0, dtune3, drxDiag3,
        txCtrlHi, pllCfg, xtal, otpAddr, otpCfg, otpRdata, stsToaHi, ciaConf, sysStateLo, softRst, clkCtrl,
        seqCtrl, rxBuffer0, rxBuffer1, txBuffer,
    ]
}

/// SYS_STATUS / SYS_ENABLE bits (write 1 to clear in SYS_STATUS).
public enum DW3000Status {
    public static let cpLock: UInt32 = 1 << 1
    public static let txFrameBegins: UInt32 = 1 << 4
    public static let txPreambleSent: UInt32 = 1 << 5
    public static let txPHRSent: UInt32 = 1 << 6
    public static let txFrameSent: UInt32 = 1 << 7          // TXFRS
    public static let rxPreambleDetected: UInt32 = 1 << 8   // RXPRD
    public static let rxSFDDetected: UInt32 = 1 << 9
    public static let ciaDone: UInt32 = 1 << 10
    public static let rxPHRDetected: UInt32 = 1 << 11
    public static let rxPHRError: UInt32 = 1 << 12           // RXPHE
    public static let rxFrameReady: UInt32 = 1 << 13         // RXFR
    public static let rxFrameGood: UInt32 = 1 << 14          // RXFCG
    public static let rxFCSError: UInt32 = 1 << 15           // RXFCE
    public static let rxSyncLoss: UInt32 = 1 << 16           // RXFSL (Reed-Solomon)
    public static let rxFrameTimeout: UInt32 = 1 << 17       // RXFTO
    public static let ciaError: UInt32 = 1 << 18
    public static let rxPreambleTimeout: UInt32 = 1 << 21    // RXPTO
    public static let spiReady: UInt32 = 1 << 23
    public static let rcInit: UInt32 = 1 << 24               // RCINIT
    public static let rxSFDTimeout: UInt32 = 1 << 26         // RXSTO
    public static let halfPeriodWarning: UInt32 = 1 << 27    // HPDWARN
    public static let cpError: UInt32 = 1 << 28
    public static let autoFrameRejected: UInt32 = 1 << 29    // ARFE

    public static let allTX: UInt32 = txFrameBegins | txPreambleSent | txPHRSent | txFrameSent
    public static let rxErrors: UInt32 = 0x3405_9000
    public static let rxTimeouts: UInt32 = 0x0022_0000
    /// Everything a received good frame leaves set.
    public static let allRXGood: UInt32 = rxPreambleDetected | rxSFDDetected | ciaDone | rxPHRDetected
        | rxFrameReady | rxFrameGood
}

func dwHex<T: BinaryInteger>(_ value: T, _ digits: Int) -> String {
    let text = String(value, radix: 16, uppercase: true)
    return String(repeating: "0", count: max(0, digits - text.count)) + text
}
