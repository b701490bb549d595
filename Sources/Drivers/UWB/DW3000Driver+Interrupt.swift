// Interrupt service: read SYS_STATUS, collect what each set bit means, clear exactly the bits
// handled (write 1 to clear) so an event arriving meanwhile stays pending and keeps the IRQ
// line asserted.
import Protocol

extension DW3000Driver {
    /// Receive-error bits and the names counters use.
    static let receiveErrorKinds: [(bit: UInt32, name: String)] = [
        (DW3000Status.rxPHRError, "PHR"), (DW3000Status.rxFCSError, "FCS"), (DW3000Status.rxSyncLoss, "sync loss"),
        (DW3000Status.ciaError, "CIA"), (DW3000Status.rxSFDTimeout, "SFD timeout"), (DW3000Status.cpError, "STS preamble"),
        (DW3000Status.autoFrameRejected, "frame rejected"),
    ]

    /// Services everything pending; called on an IRQ edge or by the polling fallback. Returns
    /// the events in the order they happened on air (a transmission before the reply it opened
    /// the receiver for).
    public func serviceInterrupt() throws(DW3000Error) -> [RangingEvent] {
        guard chip != nil else { throw .notReady }
        var events: [RangingEvent] = []
        // Bounded: a stuck bit must not hold the caller forever; it is seen on the next call.
        for _ in 0..<4 {
            let status = try read32(.sysStatus)
            guard status & Self.interruptMask != 0 else { break }
            if status & DW3000Status.txFrameSent != 0 {
                let stamp = UWBTimestamp(littleEndian: try read(.txTime))!
                try clearStatus(DW3000Status.allTX)
                counters.framesSent += 1
                events.append(.transmitted(timestamp: stamp))
            }
            if status & DW3000Status.rxFrameGood != 0 {
                events.append(try receivedFrame())
                try clearStatus(DW3000Status.allRXGood | (status & DW3000Status.rxErrors))
                consecutiveErrors = 0
            } else if status & DW3000Status.rxErrors != 0 {
                let kind: String = Self.receiveErrorKinds.first(where: { status & $0.bit != 0 })?.name ?? "unknown"
                try clearStatus(DW3000Status.rxErrors | DW3000Status.allRXGood)
                counters.receiveErrors[kind, default: 0] += 1
                consecutiveErrors += 1
                events.append(.receiveError(kind))
                if consecutiveErrors >= configuration.consecutiveErrorsBeforeReset {
                    try recover()
                    return events
                }
            } else if status & DW3000Status.rxTimeouts != 0 {
                try clearStatus(DW3000Status.rxTimeouts | DW3000Status.allRXGood)
                counters.receiveTimeouts += 1
                events.append(.receiveTimeout)
            }
        }
        return events
    }

    /// Reads a good frame: length, payload (without FCS), RX_TIME and the STS verdict.
    func receivedFrame() throws(DW3000Error) -> RangingEvent {
        let length = Int(try read32(.rxFinfo) & 0x3FF)
        let payload = length > 2 ? try read(.rxBuffer0, count: length - 2) : []
        let stamp = UWBTimestamp(littleEndian: try read(.rxTime))!
        counters.framesReceived += 1
        guard configuration.stsEnabled else {
            // No STS on air: nothing vouches for the arrival time.
            return .received(payload: payload, timestamp: stamp, stsQuality: 0, stsValid: false)
        }
        let raw = UInt16(LittleEndian.value(try read(.stsSts), as: UInt16.self) & 0xFFF)
        // ACC_QUAL is a signed 12-bit count of STS symbols that matched.
        let accQual = Int(raw) - (raw & 0x800 != 0 ? 0x1000 : 0)
        let quality = Double(accQual) / Double(configuration.stsLength)
        let toast = try read32(.stsToaHi) >> 23 & 0x1FF
        let valid = quality >= configuration.stsQualityThreshold && toast == 0
        if !valid { counters.stsInvalid += 1 }
        return .received(payload: payload, timestamp: stamp, stsQuality: quality, stsValid: valid)
    }
}
