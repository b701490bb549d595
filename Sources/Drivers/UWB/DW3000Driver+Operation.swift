// Operation: programme a transmission or a receive window and return at once; what happens is
// reported later by `serviceInterrupt()`. The only synchronous report is a late delayed TX,
// which the chip flags immediately (HPDWARN) and which must be cancelled at once.
import Protocol

extension DW3000Driver {
    /// Largest payload: TXFLEN is 10 bits and includes the 2-byte FCS.
    public static let maximumPayload = 1021
    /// The receive timeout counts UWB microseconds of 512/499.2 us; RX_FWTO has 20 bits.
    static let maximumTimeoutUnits: UInt32 = 0xF_FFFF

    /// Sends `payload` now or at chip time `at` (rounded down to 512 DTU by the chip), then
    /// optionally opens the receiver. Returns `[.transmitTooLate]` when `at` had already passed.
    @discardableResult
    public func transmit(_ payload: [UInt8], at: UWBTimestamp?,
                         thenReceiveTimeoutMicros: UInt32?) throws(DW3000Error) -> [RangingEvent] {
        guard chip != nil else { throw .notReady }
        guard payload.count <= Self.maximumPayload else { throw .payloadTooLarge(payload.count) }
        try write(.txBuffer, payload)
        // TXFLEN (with FCS), 6.8 Mbps, ranging frame, buffer offset 0.
        try write(.txFctrl, value: UInt32(payload.count + 2) | 1 << 10 | 1 << 11)
        if let timeout = thenReceiveTimeoutMicros { try setReceiveTimeout(micros: timeout) }
        let receiveAfter = thenReceiveTimeoutMicros != nil
        guard let at else {
            try command(receiveAfter ? .txThenReceive : .tx)
            return []
        }
        try write(.dxTime, value: UInt32(truncatingIfNeeded: at.rawValue >> 8))
        try command(receiveAfter ? .delayedTXThenReceive : .delayedTX)
        let status = try read32(.sysStatus)
        let state = try read32(.sysStateLo)
        if status & DW3000Status.halfPeriodWarning != 0 || state == 0x000D_0000 {
            // Too late: the chip would wait a whole 17.2 s period. Cancel and tell the role.
            try command(.txrxOff)
            try clearStatus(DW3000Status.halfPeriodWarning | DW3000Status.allTX)
            counters.lateTransmits += 1
            return [.transmitTooLate]
        }
        return []
    }

    /// Opens the receiver now for at most `timeoutMicros` (0: no timeout).
    public func receive(timeoutMicros: UInt32) throws(DW3000Error) {
        guard chip != nil else { throw .notReady }
        try setReceiveTimeout(micros: timeoutMicros)
        try command(.rx)
    }

    /// Cancels any transmission or reception in progress.
    public func stop() throws(DW3000Error) {
        try command(.txrxOff)
        try clearStatus(Self.interruptMask | DW3000Status.halfPeriodWarning)
    }

    func setReceiveTimeout(micros: UInt32) throws(DW3000Error) {
        let rxwtoe: UInt32 = 1 << 9
        if micros == 0 {
            try modify(.sysCfg, .andOr32, and: ~rxwtoe, or: 0)
            return
        }
        // Round up: a window is never shorter than asked.
        let units = min((UInt64(micros) * 4992 + 5119) / 5120, UInt64(Self.maximumTimeoutUnits))
        try write(.rxFwto, value: UInt32(units))
        try modify(.sysCfg, .andOr32, and: ~rxwtoe, or: rxwtoe)
    }

    /// Writes the STS key and IV (16 bytes each, most significant byte first, as the protocol
    /// derives them) and loads the IV into the chip's counter. The chip holds both as 128-bit
    /// little-endian numbers, so the bytes go in reversed (Qorvo's Linux driver swaps them too);
    /// the IV's last 4 bytes, the round counter, become the counter word at STS_IV[0..3]. When
    /// only the counter changed, only that word is rewritten.
    public func loadSTS(key: [UInt8], iv: [UInt8]) throws(DW3000Error) {
        guard key.count == 16, iv.count == 16 else { throw .invalidSTSMaterial(keyBytes: key.count, ivBytes: iv.count) }
        guard chip != nil else { throw .notReady }
        let previous = loadedSTS
        if previous?.key != key { try write(.stsKey, Array(key.reversed())) }
        if let previous, previous.key == key, previous.iv.prefix(12) == iv.prefix(12) {
            try write(.stsIV, Array(iv.suffix(4).reversed()))
        } else {
            try write(.stsIV, Array(iv.reversed()))
        }
        try write(.stsCtrl, [0x01])  // LOAD_IV
        loadedSTS = (key, iv)
    }

    /// Runs a role's actions in order; returns the events they produced at once (a late TX).
    /// `.finished` is the runner's business and is ignored here.
    @discardableResult
    public func execute(_ actions: [RangingAction]) throws(DW3000Error) -> [RangingEvent] {
        var events: [RangingEvent] = []
        for action in actions {
            switch action {
            case .transmit(let payload, let at, let timeout):
                events += try transmit(payload, at: at, thenReceiveTimeoutMicros: timeout)
            case .receive(let timeout):
                try receive(timeoutMicros: timeout)
            case .loadSTS(let key, let iv):
                try loadSTS(key: key, iv: iv)
            case .finished:
                break
            }
        }
        return events
    }
}
