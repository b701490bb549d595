// Bring-up, in the order of shared/reference/dw3000.md "Init sequence": slow SPI, DEV_ID, soft
// reset, RCINIT, OTP, configuration, channel, PLL lock, RX calibration, interrupts, fast SPI.
// Every poll is bounded so a dead chip fails with a typed error instead of hanging start-up.

extension DW3000Driver {
    /// Poll bounds (count x interval): RCINIT 20 x 100 us after a 1.5 ms settle, CP_LOCK 50 x 20 us
    /// (as Qorvo's driver), RX calibration 50 x 20 us.
    public static let resetSettleMicros: UInt32 = 1500
    public static let rcInitPolls = 20, rcInitPollMicros: UInt32 = 100
    public static let pllPolls = 50, pllPollMicros: UInt32 = 20
    public static let rxCalibrationPolls = 50, rxCalibrationPollMicros: UInt32 = 20

    /// OTP addresses read at bring-up.
    enum OTPAddress {
        static let ldoLow: UInt16 = 0x04, ldoHigh: UInt16 = 0x05, bias: UInt16 = 0x0A
        static let xtrim: UInt16 = 0x1E, dgc: UInt16 = 0x20, pll: UInt16 = 0x35
    }

    /// The default crystal trim when OTP holds none.
    public static let defaultXtalTrim: UInt8 = 0x2E

    /// Brings the chip from any state to configured and idle with the fast SPI clock.
    @discardableResult
    public func bringUp() throws(DW3000Error) -> DW3000ChipID {
        chip = nil
        try setClock(configuration.slowSPIHertz)
        let id = try DW3000ChipID.identify(read32(.devID))
        try softReset()
        try poll(DW3000Status.rcInit, polls: Self.rcInitPolls, every: Self.rcInitPollMicros) { .resetDidNotComplete(polls: $0) }
        try clearStatus(DW3000Status.rcInit | DW3000Status.spiReady)
        try readOTP()
        try configure()
        try setUpChannel()
        try lockPLL()
        try calibrateReceiver()
        try write(.sysEnable, value: Self.interruptMask)
        try clearStatus(0xFFFF_FFFF)
        // Only now may the clock go past 7 MHz: before the PLL locks, fast reads return garbage.
        try setClock(configuration.fastSPIHertz)
        chip = id
        consecutiveErrors = 0
        if let sts = loadedSTS {
            loadedSTS = nil
            try loadSTS(key: sts.key, iv: sts.iv)
        }
        return id
    }

    /// CLK_CTRL |= 3 (system clock from the crystal) then SOFT_RST <- 0, then the settle time.
    func softReset() throws(DW3000Error) {
        try modify(.clkCtrl, .andOr8, and: 0xFF, or: 0x03)
        try write(.softRst, [0x00])
        delay.delay(micros: Self.resetSettleMicros)
    }

    func poll(_ bit: UInt32, polls: Int, every micros: UInt32,
              failure: (Int) -> DW3000Error) throws(DW3000Error) {
        for _ in 0..<polls {
            if try read32(.sysStatus) & bit != 0 { return }
            delay.delay(micros: micros)
        }
        throw failure(polls)
    }

    /// One OTP word: CFG=1 (manual read), ADDR, CFG=2 (read strobe), RDATA.
    func readOTP(_ address: UInt16) throws(DW3000Error) -> UInt32 {
        try write(.otpCfg, value: UInt16(1))
        try write(.otpAddr, value: address)
        try write(.otpCfg, value: UInt16(2))
        return try read32(.otpRdata)
    }

    func readOTP() throws(DW3000Error) {
        var values = DW3000OTPValues()
        values.ldoLow = try readOTP(OTPAddress.ldoLow)
        values.ldoHigh = try readOTP(OTPAddress.ldoHigh)
        values.bias = try readOTP(OTPAddress.bias)
        values.dgc = try readOTP(OTPAddress.dgc)
        // XTAL_TRIM is 6 bits; an unprogrammed part reads 0 and gets the mid-range default.
        let trim = UInt8(try readOTP(OTPAddress.xtrim) & 0x3F)
        values.xtalTrim = trim == 0 ? Self.defaultXtalTrim : trim
        values.pll = try readOTP(OTPAddress.pll)
        try write(.xtal, [values.xtalTrim])
        otp = values
    }

    func configure() throws(DW3000Error) {
        let config = configuration
        try write(.sysCfg, value: config.systemConfig)
        try modify(.dtune0, .andOr16, and: ~UInt32(3), or: UInt32(config.pac.rawValue))
        try write(.stsCfg0, [config.stsConfig0])
        try write(.dtune3, value: UInt32(0xAF5F_35CC))
        try write(.chanCtrl, value: config.channelControl)
        // 6.8 Mbps (TXBR) and the ranging bit (TR); the frame length is set per frame.
        try write(.txFctrl, value: UInt32(1 << 10 | 1 << 11))
        try write(.finePlen, [config.finePreambleLength])
        try write(.txAntd, value: config.txAntennaDelay)
        try write(.ciaConf, value: config.rxAntennaDelay)
    }

    func setUpChannel() throws(DW3000Error) {
        try write(.txCtrlHi, value: configuration.txControlHi)
        try write(.pllCfg, value: configuration.pllConfig)
    }

    /// Clear CP_LOCK, set AINIT2IDLE (SEQ_CTRL bit 8), then wait for CP_LOCK.
    func lockPLL() throws(DW3000Error) {
        try clearStatus(DW3000Status.cpLock)
        try modify(.seqCtrl, .andOr16, and: 0xFFFF, or: 1 << 8)
        try poll(DW3000Status.cpLock, polls: Self.pllPolls, every: Self.pllPollMicros) { .pllDidNotLock(polls: $0) }
    }

    /// PGF calibration: start it (RX_CAL bit 0), wait for RX_CAL_STS = 1, clear both.
    func calibrateReceiver() throws(DW3000Error) {
        try write(.rxCal, value: UInt32(1))
        var done = false
        for _ in 0..<Self.rxCalibrationPolls {
            if try read(.rxCalSts)[0] & 1 == 1 { done = true; break }
            delay.delay(micros: Self.rxCalibrationPollMicros)
        }
        guard done else { throw .rxCalibrationTimedOut(polls: Self.rxCalibrationPolls) }
        try write(.rxCalSts, [1])
        try write(.rxCal, value: UInt32(0))
    }

    /// The recovery after too many consecutive receive errors: a full bring-up again.
    func recover() throws(DW3000Error) {
        counters.resets += 1
        try bringUp()
    }
}
