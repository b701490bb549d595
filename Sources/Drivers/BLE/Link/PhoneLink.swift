// The phone's end of a link, whatever carries it (`carkey phone`, tests, the load generator):
// whole protocol messages out and in, every wait bounded by the link's own timeout.
import Protocol

public protocol PhoneLink: AnyObject {
    /// Sends one protocol message (framed or fragmented as the transport needs).
    func send(_ message: Bytes) throws
    /// The next whole message from the car.
    func receive() throws -> Bytes
}

extension SimulatedLinkClient: PhoneLink {}
