// From a finished enrollment to the configuration of every later handshake with that car.

extension PhoneConfiguration {
    /// Pins the car identity key and vehicle ID the pairing proved (docs/protocol.md 18.6).
    public init(longTermKey: any ProtocolSigner, paired: PhonePairingSession.Paired) {
        self.init(longTermKey: longTermKey, carIdentityKey: paired.carIdentityKey, vehicleID: paired.vehicleID)
    }
}
