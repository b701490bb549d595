// The phone's part of UWB ranging setup (docs/protocol.md section 19): send the setup as
// command 0x07, and after the car's ok run DSTWRInitiator with the same material the car has.

extension PhoneProtocolSession {
    /// The encrypted rangingCapabilities command (0x08): ask the car what its UWB module accepts
    /// before proposing a setup. After its ok Response, `carRangingCapabilities` holds the
    /// answer and `RangingSetup` proposals come from `UWBCapabilities.proposal`. A car without
    /// a module answers `rangingUnsupported`; a car older than the command `malformedMessage`
    /// (command byte 0x00): propose the protocol's preferred values then (19.2).
    public mutating func rangingCapabilitiesCommand(now: ProtocolTime) throws(PhoneError) -> Bytes {
        try command(.rangingCapabilities, now: now)
    }

    /// The car's answer to rangingCapabilities in this session, nil before one arrived.
    public var carRangingCapabilities: UWBCapabilities? {
        guard case .established(let session) = state else { return nil }
        return session.rangingCapabilities
    }

    /// The encrypted rangingSetup command for `setup` (make it with `RangingSetup.random`; a
    /// new session ID for every setup). Wait for its Response before ranging: the car refuses
    /// what it cannot use with `rangingUnsupported`.
    public mutating func rangingSetupCommand(_ setup: RangingSetup, now: ProtocolTime) throws(PhoneError) -> Bytes {
        try command(.rangingSetup, args: setup.encoded(), now: now)
    }

    /// The material for `setup` in this session, for `DSTWRInitiator(material:...)`. The same
    /// value the car derives; it exists only while the session does.
    public func rangingMaterial(for setup: RangingSetup) throws(PhoneError) -> RangingMaterial {
        guard case .established(let session) = state else { throw .notEstablished }
        return RangingMaterial(rangingKey: session.rangingKey, setup: setup)
    }
}
