// The simulated chip's radio: its drifting 40-bit clock, fast commands, delayed TX with the
// 512-DTU truncation and HPDWARN, receive windows with the frame wait timeout, and received
// frames with antenna delays, STS quality and TOAST.
import Protocol

extension SimulatedDW3000 {
    enum Radio: Equatable {
        case idle
        case transmitting
        case listening(since: Double, deadline: Double?)
        case receiving
    }

    /// One preamble symbol at 64 MHz PRF: 508 chips at 499.2 MHz, about 1.0176 us.
    static let symbolPicoseconds = 1_017_630.0
    /// A receiver must be on this long before the RMARKER to acquire the preamble.
    static let acquisitionPicoseconds = 16 * symbolPicoseconds

    // MARK: - Clock

    /// DTU per picosecond of true time, with this chip's crystal error.
    var unitsPerPicosecond: Double { (1 + driftPPM * 1e-6) / SimulatedUWBAir.picosecondsPerUnit }

    func unwrappedUnits(atPicoseconds t: Double) -> Double { Double(startUnits) + t * unitsPerPicosecond }

    func picoseconds(atUnwrappedUnits units: Double) -> Double { (units - Double(startUnits)) / unitsPerPicosecond }

    /// The chip's 40-bit counter now.
    public var localUnits: UInt64 { UInt64(unwrappedUnits(atPicoseconds: Double(air.nowPicoseconds))) & UWBTimestamp.mask }

    public var localTime: UWBTimestamp { UWBTimestamp(localUnits) }

    // MARK: - Timing of a frame

    var preambleSymbols: Int { (Int(files[0x00][0x29]) + 1) * 8 }
    var stsOn: Bool { u32(0x00, 0x10) >> 12 & 3 != 0 }
    var stsSymbols: Int { (Int(files[0x02][0x00]) + 1) * 8 }
    var antennaDelayTX: UInt64 { UInt64(files[0x01][0x04]) | UInt64(files[0x01][0x05]) << 8 }
    var antennaDelayRX: UInt64 { UInt64(files[0x0E][0x00]) | UInt64(files[0x0E][0x01]) << 8 }

    /// Preamble and SFD go out before the RMARKER.
    var leadPicoseconds: Double { Double(preambleSymbols + 8) * Self.symbolPicoseconds }

    /// STS, PHR (21 bits at 850 kb/s) and data (6.8 Mb/s) follow it.
    func tailPicoseconds(payloadBytes: Int, sts: Bool) -> Double {
        (sts ? Double(stsSymbols) * Self.symbolPicoseconds : 0) + 21 / 850e3 * 1e12
            + Double((payloadBytes + 2) * 8) / 6.8e6 * 1e12
    }

    // MARK: - Fast commands

    func execute(_ command: DW3000FastCommand) {
        switch command {
        case .txrxOff:
            cancelRadio()
            return
        case .clearIRQs:
            status = 0
            return
        default:
            break
        }
        guard pllLocked else {
            protocolErrors.append("\(command) while not in IDLE_PLL (PLL not locked)")
            return
        }
        if radio != .idle { protocolErrors.append("\(command) while the radio is busy (\(radio)); previous operation cancelled") }
        switch command {
        case .tx: startTransmission(delayed: false, thenReceive: false)
        case .txThenReceive: startTransmission(delayed: false, thenReceive: true)
        case .delayedTX: startTransmission(delayed: true, thenReceive: false)
        case .delayedTXThenReceive: startTransmission(delayed: true, thenReceive: true)
        case .rx: startReception()
        case .txrxOff, .clearIRQs: break
        }
    }

    func cancelRadio() {
        generation += 1
        radio = .idle
    }

    func setSystemState(_ value: UInt32) { store(0x0F, 0x30, LittleEndian.bytes(value)) }

    /// Steps the latched counter: bytes 16...19 of key+IV are the IV's low word, little-endian.
    func advanceSTSCounter() {
        guard stsCounterAdvancesPerFrame, var sts = activeSTS else { return }
        let counter = LittleEndian.value(sts[16..<20], as: UInt32.self) &+ 1
        sts.replaceSubrange(16..<20, with: LittleEndian.bytes(counter))
        activeSTS = sts
    }

    // MARK: - Transmission

    func startTransmission(delayed: Bool, thenReceive: Bool) {
        cancelRadio()
        setSystemState(0)
        let length = Int(u32(0x00, 0x24) & 0x3FF)
        guard length >= 2 else {
            protocolErrors.append("TX with TXFLEN \(length) (must include the 2-byte FCS)")
            return
        }
        let now = Double(air.nowPicoseconds)
        let nowUnits = unwrappedUnits(atPicoseconds: now)
        let rmarkerUnits: Double
        if delayed {
            // DX_TIME holds bits 39:8 and its bit 0 is ignored: 512-DTU steps.
            let target = UInt64(u32(0x00, 0x2C) & ~1) << 8
            let ahead = (target &- UInt64(nowUnits)) & UWBTimestamp.mask
            let needed = leadPicoseconds * unitsPerPicosecond
            guard ahead < UWBTimestamp.modulus / 2, Double(ahead) >= needed else {
                // Already past (or too close to start the preamble): the chip would wait a period.
                status |= DW3000Status.halfPeriodWarning
                setSystemState(0x000D_0000)
                return
            }
            rmarkerUnits = Double(UInt64(nowUnits) + ahead)
        } else {
            rmarkerUnits = (nowUnits + leadPicoseconds * unitsPerPicosecond).rounded(.down)
        }
        let payload = Array(files[0x14][0..<min(length - 2, 1022)])
        let rmarker = picoseconds(atUnwrappedUnits: rmarkerUnits)
        let stamp = (UInt64(rmarkerUnits) &+ antennaDelayTX) & UWBTimestamp.mask
        let sts = stsOn
        let frame = UWBAirFrame(sender: name, payload: payload, sts: sts ? activeSTS : nil,
                                stsLength: sts ? stsSymbols : 0)
        if sts { advanceSTSCounter() }
        let emitted = rmarker + Double(physicalTxAntennaDelay) * SimulatedUWBAir.picosecondsPerUnit
        air.propagate(frame, from: self, emittedAt: emitted)
        radio = .transmitting
        let generation = self.generation
        let done = rmarker + tailPicoseconds(payloadBytes: payload.count, sts: sts)
        air.schedule(atPicoseconds: UInt64(done)) { [weak self] in
            guard let self, self.generation == generation else { return }
            self.store(0x00, 0x74, UWBTimestamp(stamp).littleEndianBytes)
            self.status |= DW3000Status.allTX
            self.radio = .idle
            if thenReceive { self.startReception() }
            self.updateIRQ()
        }
    }

    // MARK: - Reception

    func startReception() {
        cancelRadio()
        let now = Double(air.nowPicoseconds)
        var deadline: Double?
        if u32(0x00, 0x10) & (1 << 9) != 0 {
            // RX_FWTO counts UWB microseconds of 512/499.2 us.
            let units = Double(u32(0x00, 0x34) & 0xF_FFFF)
            if units > 0 { deadline = now + units * 512 / 499.2 * 1e6 }
        }
        radio = .listening(since: now, deadline: deadline)
        guard let deadline else { return }
        let generation = self.generation
        air.schedule(atPicoseconds: UInt64(deadline)) { [weak self] in
            guard let self, self.generation == generation, case .listening = self.radio else { return }
            self.status |= DW3000Status.rxFrameTimeout
            self.radio = .idle
            self.updateIRQ()
        }
    }

    /// The channel hands over a frame whose RMARKER reaches this antenna at `arrival`.
    func frameArrives(_ frame: UWBAirFrame, atPicoseconds arrival: Double) {
        air.schedule(atPicoseconds: UInt64(max(0, arrival))) { [weak self] in
            self?.rmarkerArrived(frame, at: arrival)
        }
    }

    private func rmarkerArrived(_ frame: UWBAirFrame, at arrival: Double) {
        guard case .listening(let since, let deadline) = radio, since <= arrival - Self.acquisitionPicoseconds,
              deadline.map({ arrival <= $0 }) ?? true else { return }
        radio = .receiving
        let generation = self.generation
        let done = arrival + tailPicoseconds(payloadBytes: frame.payload.count, sts: frame.sts != nil)
        air.schedule(atPicoseconds: UInt64(done)) { [weak self] in
            guard let self, self.generation == generation else { return }
            self.completeReception(frame, arrival: arrival)
        }
    }

    private func completeReception(_ frame: UWBAirFrame, arrival: Double) {
        radio = .idle
        defer {
            if stsOn { advanceSTSCounter() }
            updateIRQ()
        }
        if frame.corrupted {
            status |= DW3000Status.rxPreambleDetected | DW3000Status.rxSFDDetected | DW3000Status.rxPHRDetected
                | DW3000Status.rxFCSError
            return
        }
        let digital = arrival + Double(physicalRxAntennaDelay) * SimulatedUWBAir.picosecondsPerUnit
        let stamp = (UInt64(unwrappedUnits(atPicoseconds: digital)) &- antennaDelayRX) & UWBTimestamp.mask
        store(0x00, 0x64, UWBTimestamp(stamp).littleEndianBytes)
        store(0x00, 0x4C, LittleEndian.bytes(UInt32(frame.payload.count + 2)))
        store(0x12, 0, frame.payload + [0, 0])
        var accQual = 0
        if stsOn {
            // The STS correlates only with the same key and IV and a genuine first path.
            let correlates = frame.sts != nil && frame.sts == activeSTS && !frame.forgedFirstPath
            accQual = Int(air.drawQuality(correlates: correlates) * Double(stsSymbols))
        }
        store(0x02, 0x08, LittleEndian.bytes(UInt16(truncatingIfNeeded: accQual) & 0xFFF))
        store(0x0C, 0x0C, LittleEndian.bytes(UInt32(faults.contains(.toastSet) ? 1 << 23 : 0)))
        status |= DW3000Status.allRXGood
    }
}
