// What the phone session reports after each received message.

public enum PhoneEvent: Sendable, Equatable {
    /// Write these bytes to the car (the AuthResponse).
    case send(Bytes)
    /// The car accepted the key; the session is open.
    case established(SessionAcceptedBody)
    /// The car's answer to a command (or a fault inside the session).
    case response(ResponseBody)
    /// A cleartext Fault before the session existed: the handshake is over. Unauthenticated,
    /// so it is advice, not proof.
    case fault(FaultMessage)
}
