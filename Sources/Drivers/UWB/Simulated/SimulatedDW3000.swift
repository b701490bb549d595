// A register-level DW3000 behind `SPIDevice`: it decodes every header the way the chip does,
// keeps a register file, and answers with the chip's semantics (write-1-to-clear status, timed
// RCINIT/CP_LOCK, the OTP read sequence, garbage when clocked too fast before the PLL locks).
// It never trusts the driver: a malformed or out-of-range access is recorded in
// `protocolErrors` and answered with zeros, never a crash. The radio half is in
// SimulatedDW3000+Radio.swift.
import Protocol

public final class SimulatedDW3000: SPIDevice {
    public enum Fault: Hashable, Sendable {
        /// Nothing drives MISO: every read is 0xFF.
        case noChip
        /// RCINIT never sets after a reset.
        case rcInitNeverSets
        /// CP_LOCK never sets after AINIT2IDLE.
        case pllNeverLocks
        /// RX_CAL_STS never reads 1.
        case rxCalibrationNeverFinishes
        /// Every received frame has TOAST bits set.
        case toastSet
    }

    /// One SPI transaction as the chip decoded it.
    public struct TraceEntry: Sendable, Equatable, CustomStringConvertible {
        public enum Kind: String, Sendable { case read = "R", write = "W", andOr = "AO", command = "CMD", invalid = "BAD" }
        public let kind: Kind
        /// Register name from `DW3000Register.all` (or "ff:oo"), or the fast command's name.
        public let target: String
        /// Everything clocked out, header included.
        public let bytes: [UInt8]
        public let readCount: Int
        /// The SPI clock the transaction ran at.
        public let clockHertz: UInt32
        /// "R DEV_ID", "W SOFT_RST", "CMD TX": what init-sequence tests compare.
        public var summary: String { "\(kind.rawValue) \(target)" }
        public var description: String { summary + " " + bytes.map { dwHex($0, 2) }.joined(separator: " ") }

        init(kind: Kind, target: String, bytes: [UInt8], readCount: Int, clockHertz: UInt32) {
            self.kind = kind
            self.target = target
            self.bytes = bytes
            self.readCount = readCount
            self.clockHertz = clockHertz
        }
    }

    public let name: String
    public let driftPPM: Double
    public let startUnits: UInt64
    public var chipID: UInt32
    public var faults: Set<Fault> = []
    /// OTP words by address (0x1E XTRIM; blank by default, so the driver's 0x2E applies).
    public var otp: [UInt16: UInt32] = [0x04: 0x0000_1234, 0x05: 0x0000_5678, 0x0A: 0x0000_0011, 0x20: 0x0000_0001, 0x35: 0x0000_0000]
    /// The antenna delays the hardware really has (DTU); the driver's calibration should match.
    public var physicalTxAntennaDelay: UInt16 = 16385
    public var physicalRxAntennaDelay: UInt16 = 16385
    /// The STS IV counter (the IV's low 32 bits) advances by one after every STS frame sent or
    /// received, so both ends stay in step frame by frame after one LOAD_IV per round. (An
    /// assumption shared with Protocol/Ranging's RangingMaterial; the reference is silent.)
    public var stsCounterAdvancesPerFrame = true
    public private(set) var clockHertz: UInt32 = 1_000_000
    public private(set) var trace: [TraceEntry] = [] {
        didSet { if trace.count > traceCapacity { trace.removeFirst(trace.count - traceCapacity / 2) } }
    }
    /// Older entries are dropped beyond this, so a long simulation (`--simulate`, benchmarks)
    /// does not grow without bound; 0 keeps none.
    public var traceCapacity = 100_000
    /// Every way the driver misused the chip, in order.
    public internal(set) var protocolErrors: [String] = []
    public private(set) var resets = 0
    /// Called when the IRQ line rises (level: SYS_STATUS & SYS_ENABLE != 0).
    public var onInterrupt: (() -> Void)?
    /// Called on every change of the IRQ line's level (to drive a simulated GPIO input).
    public var onInterruptLevel: ((Bool) -> Void)?

    /// Strong: a chip keeps its world alive (the air holds chips weakly, so there is no cycle).
    let air: SimulatedUWBAir
    var files: [[UInt8]] = []
    var status: UInt32 = 0
    var rcInitAt: UInt64?
    var pllLockAt: UInt64?
    var pllLocked = false
    var rxCalibrationDoneAt: UInt64?
    var otpManualMode = false
    /// Key (16 bytes) then IV (16 bytes) as latched by LOAD_IV.
    var activeSTS: [UInt8]?
    var radio = Radio.idle
    /// Bumped by anything that cancels the radio, so stale scheduled completions do nothing.
    var generation = 0
    private var irqLevel = false

    static let rcInitDelayMicros: UInt64 = 1000
    static let pllLockDelayMicros: UInt64 = 30
    static let rxCalibrationDelayMicros: UInt64 = 20
    /// Above this the chip's RC-clocked SPI returns garbage until the PLL locks.
    static let slowSPILimit: UInt32 = 7_000_000

    init(air: SimulatedUWBAir, name: String, driftPPM: Double, chipID: UInt32, startUnits: UInt64) {
        self.air = air
        self.name = name
        self.driftPPM = driftPPM
        self.chipID = chipID
        self.startUnits = startUnits & UWBTimestamp.mask
        powerOn()
    }

    public var irqAsserted: Bool { status & u32(0x00, 0x3C) != 0 }

    public var sysStatus: UInt32 { refreshTimedBits(); return status }

    /// The `summary` of every transaction so far.
    public var traceSummary: [String] { trace.map(\.summary) }

    public func clearTrace() { trace.removeAll() }

    /// Sets status bits from outside (a test forcing an RX error); the radio stops as the chip's would.
    public func raiseStatus(_ bits: UInt32) {
        status |= bits
        cancelRadio()
        updateIRQ()
    }

    // MARK: - SPIDevice

    public func setClock(hertz: UInt32) throws(SPIError) { clockHertz = hertz }

    public func transfer(write: [UInt8], readCount: Int) throws(SPIError) -> [UInt8] {
        defer { updateIRQ() }
        if faults.contains(.noChip) {
            trace.append(TraceEntry(kind: .invalid, target: "no chip", bytes: write, readCount: readCount, clockHertz: clockHertz))
            return [UInt8](repeating: 0xFF, count: readCount)
        }
        guard readCount >= 0, let decoded = DW3000Header.decode(write) else {
            return invalid(write, readCount, "malformed header \(write.prefix(2).map { dwHex($0, 2) })")
        }
        let garbled = clockHertz > Self.slowSPILimit && !pllLocked
        switch decoded {
        case .fast(let code):
            let command = DW3000FastCommand(rawValue: code)
            trace.append(TraceEntry(kind: .command, target: command.map { "\($0)" } ?? "0x\(dwHex(code, 2))", bytes: write, readCount: readCount, clockHertz: clockHertz))
            guard write.count == 1, readCount == 0 else { return flag("fast command with extra bytes", readCount) }
            if garbled { return flag("SPI at \(clockHertz) Hz before PLL lock: command lost", 0) }
            guard let command else { return flag("unknown fast command 0x\(dwHex(code, 2))", 0) }
            execute(command)
            return []
        case .access(let file, let offset, let isWrite, let mode, let headerLength):
            let body = Array(write[headerLength...])
            let target = Self.registerName(file: file, offset: offset)
            if !isWrite {
                trace.append(TraceEntry(kind: .read, target: target, bytes: write, readCount: readCount, clockHertz: clockHertz))
                guard body.isEmpty else { return flag("read header followed by \(body.count) data bytes", readCount) }
                if garbled { return flag("SPI at \(clockHertz) Hz before PLL lock: read garbled", readCount, fill: 0xFF) }
                return readBytes(file: Int(file), offset: Int(offset), count: readCount)
            }
            trace.append(TraceEntry(kind: mode == .plain ? .write : .andOr, target: target, bytes: write, readCount: readCount, clockHertz: clockHertz))
            guard readCount == 0 else { return flag("write to \(target) also asked to read \(readCount) bytes", readCount) }
            if garbled { return flag("SPI at \(clockHertz) Hz before PLL lock: write to \(target) lost", 0) }
            if mode == .plain {
                guard !body.isEmpty else { return flag("write to \(target) without data", 0) }
                writeBytes(file: Int(file), offset: Int(offset), body)
            } else {
                let width = mode.maskWidth
                guard body.count == 2 * width else {
                    return flag("AND-OR \(width * 8) write to \(target) with \(body.count) data bytes (expected \(2 * width))", 0)
                }
                let old = readBytes(file: Int(file), offset: Int(offset), count: width)
                let new = (0..<width).map { (old[$0] & body[$0]) | body[width + $0] }
                writeBytes(file: Int(file), offset: Int(offset), new)
            }
            return []
        }
    }

    private func invalid(_ write: [UInt8], _ readCount: Int, _ message: String) -> [UInt8] {
        trace.append(TraceEntry(kind: .invalid, target: "?", bytes: write, readCount: readCount, clockHertz: clockHertz))
        return flag(message, readCount)
    }

    private func flag(_ message: String, _ readCount: Int, fill: UInt8 = 0) -> [UInt8] {
        protocolErrors.append(message)
        return [UInt8](repeating: fill, count: max(0, readCount))
    }

    static func registerName(file: UInt8, offset: UInt16) -> String {
        DW3000Register.all.first { $0.file == file && $0.offset == offset }?.name ?? "\(dwHex(file, 2)):\(dwHex(offset, 2))"
    }

    // MARK: - Register file

    static func fileSize(_ file: Int) -> Int { (0x12...0x14).contains(file) ? 1024 : 0x80 }

    func powerOn() {
        files = (0..<32).map { [UInt8](repeating: 0, count: Self.fileSize($0)) }
        store(0x00, 0x00, LittleEndian.bytes(chipID))
        files[0x11][0x00] = 0xFF
        status = 0
        pllLocked = false
        pllLockAt = nil
        rxCalibrationDoneAt = nil
        otpManualMode = false
        activeSTS = nil
        rcInitAt = air.nowPicoseconds
        cancelRadio()
    }

    func reset() {
        resets += 1
        powerOn()
        rcInitAt = air.nowPicoseconds + Self.rcInitDelayMicros * 1_000_000
    }

    func store(_ file: Int, _ offset: Int, _ bytes: [UInt8]) {
        for (index, byte) in bytes.enumerated() { files[file][offset + index] = byte }
    }

    func u32(_ file: Int, _ offset: Int) -> UInt32 { LittleEndian.value(files[file][offset..<offset + 4]) }

    /// Sets the bits whose time has come (RCINIT after reset, CP_LOCK after AINIT2IDLE, RX_CAL_STS).
    func refreshTimedBits() {
        let now = air.nowPicoseconds
        if let at = rcInitAt, now >= at, !faults.contains(.rcInitNeverSets) {
            status |= DW3000Status.rcInit | DW3000Status.spiReady
            rcInitAt = nil
        }
        if let at = pllLockAt, now >= at {
            status |= DW3000Status.cpLock
            pllLocked = true
            pllLockAt = nil
        }
        if let at = rxCalibrationDoneAt, now >= at {
            files[0x04][0x20] = 1
            rxCalibrationDoneAt = nil
        }
    }

    func readBytes(file: Int, offset: Int, count: Int) -> [UInt8] {
        guard offset + count <= Self.fileSize(file) else {
            return flag("read of \(count) bytes at \(dwHex(file, 2)):\(dwHex(offset, 2)) runs past the register file", count)
        }
        refreshTimedBits()
        if file == 0 {
            store(0x00, 0x1C, LittleEndian.bytes(UInt32(truncatingIfNeeded: localUnits >> 8)))
            store(0x00, 0x44, LittleEndian.bytes(status))
        }
        return Array(files[file][offset..<offset + count])
    }

    func writeBytes(file: Int, offset: Int, _ bytes: [UInt8]) {
        guard offset + bytes.count <= Self.fileSize(file) else {
            protocolErrors.append("write of \(bytes.count) bytes at \(dwHex(file, 2)):\(dwHex(offset, 2)) runs past the register file")
            return
        }
        refreshTimedBits()
        let range = offset..<offset + bytes.count
        if file == 0 && range.overlaps(0..<4) { protocolErrors.append("write to read-only DEV_ID") }
        for (index, byte) in bytes.enumerated() {
            let at = offset + index
            if file == 0 && (0x44...0x47).contains(at) {
                status &= ~(UInt32(byte) << (8 * UInt32(at - 0x44)))  // write 1 to clear
            } else if file == 0x04 && at == 0x20 {
                files[file][at] &= ~byte  // RX_CAL_STS: write 1 to clear
            } else if file == 0 && at < 4 {
                continue
            } else {
                files[file][at] = byte
            }
        }
        afterWrite(file: file, range: range)
    }

    /// The side effects of writing particular registers.
    private func afterWrite(file: Int, range: Range<Int>) {
        func touched(_ register: DW3000Register) -> Bool {
            Int(register.file) == file && range.overlaps(Int(register.offset)..<Int(register.offset) + register.length)
        }
        if touched(.softRst) && files[0x11][0x00] == 0 {
            reset()
            return
        }
        if touched(.otpCfg) {
            let cfg = files[0x0B][0x08]
            if cfg & 1 != 0 { otpManualMode = true }
            if cfg & 2 != 0 {
                if !otpManualMode { protocolErrors.append("OTP read strobe without manual mode (OTP_CFG=1 first)") }
                let address = UInt16(files[0x0B][0x04]) | UInt16(files[0x0B][0x05]) << 8
                store(0x0B, 0x10, LittleEndian.bytes(otp[address] ?? 0))
                otpManualMode = false
            }
        }
        if touched(.seqCtrl) && files[0x11][0x09] & 1 != 0 && !pllLocked && pllLockAt == nil
            && !faults.contains(.pllNeverLocks) {
            pllLockAt = air.nowPicoseconds + Self.pllLockDelayMicros * 1_000_000
        }
        if touched(.stsCtrl) && files[0x02][0x04] & 1 != 0 {
            activeSTS = Array(files[0x02][0x0C..<0x2C])
            files[0x02][0x04] &= ~1  // LOAD_IV clears itself
        }
        if touched(.rxCal) && files[0x04][0x0C] & 1 != 0 && !faults.contains(.rxCalibrationNeverFinishes) {
            rxCalibrationDoneAt = air.nowPicoseconds + Self.rxCalibrationDelayMicros * 1_000_000
        }
    }

    func updateIRQ() {
        let level = irqAsserted
        guard level != irqLevel else { return }
        irqLevel = level
        onInterruptLevel?(level)
        if level { onInterrupt?() }
    }
}
