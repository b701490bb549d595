// The phone's end of a link, whatever carries it (`carkey phone`, tests, the load generator):
// whole protocol messages out and in, every wait bounded by the link's own timeout.
import Protocol

public protocol PhoneLink: AnyObject {
    /// Sends one protocol message (framed or fragmented as the transport needs).
    func send(_ message: Bytes) throws
    /// The next whole message from the car.
    func receive() throws -> Bytes
    /// `bytes` as the transport carries them, past its framing: one write of the raw stream
    /// (simulated link), one ATT Write Command value (Bluetooth LE). A testing aid
    /// (`carkey phone --misbehave bad-fragment`): the car must end the link.
    func sendUnframed(_ bytes: Bytes) throws
}

extension SimulatedLinkClient: PhoneLink {}
