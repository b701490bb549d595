// What the board file and the ranging profile decide about the radio. Defaults follow the
// reference examples (channel 5, code 9, PAC 8, 128-symbol preamble, 6.8 Mbps) with STS on,
// since a key without STS gives no relay protection.

public enum UWBChannel: UInt8, Sendable, Equatable {
    case five = 5
    case nine = 9
}

/// Preamble acquisition chunk, as the DTUNE0 PAC field encodes it.
public enum DW3000PAC: UInt8, Sendable, Equatable {
    case pac8 = 0
    case pac16 = 1
    case pac32 = 2
    case pac4 = 3
}

public struct DW3000Configuration: Sendable, Equatable {
    public var channel: UWBChannel = .five
    /// Preamble code for both TX and RX (9...12 at 64 MHz PRF).
    public var preambleCode: UInt8 = 9
    public var pac: DW3000PAC = .pac8
    /// Preamble length in symbols (64...4096, a multiple of 8).
    public var preambleLength: Int = 128
    /// SFD type (CHAN_CTRL SFD_TYPE): 3 is the IEEE 802.15.4z 8-symbol SFD, required with STS.
    public var sfdType: UInt8 = 3
    /// STS mode 1 (CP_SPC=1: STS after the SFD, before the PHR); false sends no STS at all.
    public var stsEnabled: Bool = true
    /// STS length in symbols (a multiple of 8, 32...2048).
    public var stsLength: Int = 64
    /// Antenna delays in DTU (16385 in Qorvo's examples; calibrate per board).
    public var txAntennaDelay: UInt16 = 16385
    public var rxAntennaDelay: UInt16 = 16385
    /// Minimum ACC_QUAL as a fraction of the STS length for a frame to count as STS-valid.
    public var stsQualityThreshold: Double = 0.6
    /// SPI clock until the PLL locks: the chip runs from its RC oscillator and needs at most 7 MHz.
    public var slowSPIHertz: UInt32 = 2_000_000
    /// SPI clock after bring-up.
    public var fastSPIHertz: UInt32 = 20_000_000
    /// Consecutive receive errors after which the driver resets and reconfigures the chip.
    public var consecutiveErrorsBeforeReset: Int = 5

    public init() {}

    /// Refuses combinations the chip or the security model cannot use.
    public func validate() throws(DW3000Error) {
        guard (9...12).contains(preambleCode) else {
            throw .invalidConfiguration("preamble code \(preambleCode) (use 9...12 at 64 MHz PRF)")
        }
        guard [64, 128, 256, 512, 1024, 1536, 2048, 4096].contains(preambleLength) else {
            throw .invalidConfiguration("preamble length \(preambleLength)")
        }
        guard sfdType <= 3 else { throw .invalidConfiguration("SFD type \(sfdType)") }
        if stsEnabled {
            guard sfdType == 3 else { throw .invalidConfiguration("STS needs SFD type 3 (IEEE 802.15.4z)") }
            guard stsLength % 8 == 0, (32...2048).contains(stsLength) else {
                throw .invalidConfiguration("STS length \(stsLength) (a multiple of 8, 32...2048)")
            }
        }
        guard stsQualityThreshold > 0, stsQualityThreshold <= 1 else {
            throw .invalidConfiguration("STS quality threshold \(stsQualityThreshold) (0 < t <= 1)")
        }
        guard slowSPIHertz > 0, slowSPIHertz <= 7_000_000 else {
            throw .invalidConfiguration("bring-up SPI clock \(slowSPIHertz) Hz (at most 7 MHz before the PLL locks)")
        }
        guard fastSPIHertz > 0, fastSPIHertz <= 38_000_000 else {
            throw .invalidConfiguration("SPI clock \(fastSPIHertz) Hz (at most 38 MHz)")
        }
        guard consecutiveErrorsBeforeReset > 0 else {
            throw .invalidConfiguration("consecutiveErrorsBeforeReset must be at least 1")
        }
    }

    // Register values derived from the configuration.

    var channelControl: UInt32 {
        let code = UInt32(preambleCode & 0x1F)
        return (channel == .nine ? 1 : 0) | UInt32(sfdType & 3) << 1 | code << 3 | code << 8
    }

    /// SYS_CFG: CP_SPC (bits 13:12) = 1 with STS; CIA_STS (bit 8) so the CIA also times the STS;
    /// RXWTOE (bit 9) is switched per receive.
    var systemConfig: UInt32 {
        stsEnabled ? (1 << 12 | 1 << 8) : 0
    }

    /// STS_CFG0: length in 8-symbol blocks, minus one.
    var stsConfig0: UInt8 { UInt8(truncatingIfNeeded: stsLength / 8 - 1) }

    /// FINE_PLEN: preamble symbols / 8 - 1.
    var finePreambleLength: UInt8 { UInt8(truncatingIfNeeded: min(preambleLength, 2048) / 8 - 1) }

    var txControlHi: UInt32 { channel == .five ? 0x1C07_1134 : 0x1C01_0034 }
    var pllConfig: UInt16 { channel == .five ? 0x1F3C : 0x0F3C }
}
