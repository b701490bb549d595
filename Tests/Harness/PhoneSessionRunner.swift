// One complete phone visit, in process: connect to the agent's link socket, Hello, verify the
// Challenge and answer it, one command, read the Response, close. The reference phone state
// machine (PhoneProtocolSession) does the crypto; no `carkey phone` subprocess, which would
// cost a process start per session and hide the agent's own cost.
#if canImport(Glibc)
import Glibc
#endif
import Drivers
import Protocol

/// How one visit ended, as the phone saw it.
public enum LoadOutcome: Hashable, Sendable, CustomStringConvertible {
    /// The car answered the command with ok.
    case ok
    /// A fault inside the session (the Response to the command), e.g. busy while a pulse runs.
    case fault(String)
    /// A cleartext fault before any session, e.g. busy when every link slot is taken.
    case refused(String)
    /// The link failed (timeout, closed by the car, connect refused, I/O).
    case link(String)
    /// The phone refused what the car sent (a wrong signature would land here).
    case phone(String)

    public var description: String {
        switch self {
        case .ok: return "ok"
        case .fault(let name): return "fault." + name
        case .refused(let name): return "refused." + name
        case .link(let what): return "link." + what
        case .phone(let what): return "phone." + what
        }
    }
}

public enum PhoneSessionRunner {
    /// Runs one visit with `command`. Never throws: every ending is an outcome to count.
    public static func visit(_ configuration: PhoneConfiguration, socketPath: String, command: CommandCode,
                             timeoutMillis: UInt64 = 10_000) -> LoadOutcome {
        let link: SimulatedLinkClient
        do throws(SimulatedLinkError) {
            link = try SimulatedLinkClient(socketPath: socketPath, timeoutMillis: timeoutMillis)
        } catch {
            return .link(linkName(error))
        }
        var phone = PhoneProtocolSession(configuration: configuration)
        do {
            if let refusal = try sendHello(try phone.start(), over: link, phone: &phone) { return refusal }
            while !phone.isEstablished {
                switch try phone.receive(try link.receive(), now: now()) {
                case .send(let response): try link.send(response)
                case .established: break
                case .fault(let fault): return .refused(faultName(fault.code))
                case .response: return .phone("responseBeforeSession")
                }
            }
            try link.send(try phone.command(command, now: now()))
            while true {
                if case .response(let body) = try phone.receive(try link.receive(), now: now()) {
                    return body.fault.map { .fault($0.name) } ?? .ok
                }
            }
        } catch let error as SimulatedLinkError {
            return .link(linkName(error))
        } catch let error as PhoneError {
            return .phone(phoneName(error))
        } catch {
            return .phone("other")
        }
    }

    /// Sends the Hello. The car may have refused the connection (every link slot taken) and
    /// closed it before the Hello went out: the send then fails with EPIPE, but the car's
    /// cleartext Fault is still queued for us, so read it and report the refusal.
    static func sendHello(_ hello: Bytes, over link: SimulatedLinkClient, phone: inout PhoneProtocolSession) throws -> LoadOutcome? {
        do {
            try link.send(hello)
            return nil
        } catch {
            guard case .io(let errno) = error, errno.rawValue == EPIPE || errno.rawValue == ECONNRESET else { throw error }
            if let bytes = try? link.receive(), case .fault(let fault)? = try? phone.receive(bytes, now: now()) {
                return .refused(faultName(fault.code))
            }
            throw error
        }
    }

    /// The phone's clock: trusted wall time, as a phone synchronised by its network has.
    static func now() -> ProtocolTime {
        var wall = timespec(), mono = timespec()
        clock_gettime(CLOCK_REALTIME, &wall)
        clock_gettime(CLOCK_MONOTONIC, &mono)
        return ProtocolTime(monotonicMillis: UInt64(mono.tv_sec) * 1000 + UInt64(mono.tv_nsec) / 1_000_000,
                            wallSeconds: Int64(wall.tv_sec), wallClockTrusted: true)
    }

    static func faultName(_ code: UInt16) -> String {
        FaultCode(rawValue: code)?.name ?? "code\(code)"
    }

    static func linkName(_ error: SimulatedLinkError) -> String {
        switch error {
        case .connectFailed(let errno): return "connectFailed." + errnoName(errno.rawValue)
        case .io(let errno): return "io." + errnoName(errno.rawValue)
        case .timedOut: return "timedOut"
        case .closedByPeer: return "closedByPeer"
        case .malformedFrame: return "malformedFrame"
        }
    }

    static func errnoName(_ code: Int32) -> String {
        switch code {
        case EPIPE: return "EPIPE"
        case ECONNRESET: return "ECONNRESET"
        case ECONNREFUSED: return "ECONNREFUSED"
        case EAGAIN: return "EAGAIN"
        case ENOENT: return "ENOENT"
        default: return "errno\(code)"
        }
    }

    /// The error's case name only: no bytes of what the car sent.
    static func phoneName(_ error: PhoneError) -> String {
        switch error {
        case .malformed: return "malformed"
        case .unexpectedMessage: return "unexpectedMessage"
        case .wrongVehicle: return "wrongVehicle"
        case .carSignatureInvalid: return "carSignatureInvalid"
        case .invalidCarEphemeralKey: return "invalidCarEphemeralKey"
        case .decryptionFailed: return "decryptionFailed"
        case .replayedCounter: return "replayedCounter"
        case .outOfOrderCounter: return "outOfOrderCounter"
        case .notEstablished: return "notEstablished"
        case .commandPending: return "commandPending"
        case .sessionExhausted: return "sessionExhausted"
        case .signingFailed: return "signingFailed"
        case .keyGenerationFailed: return "keyGenerationFailed"
        case .pairingNotConfirmed: return "pairingNotConfirmed"
        case .advertisingKeyGrantInvalid: return "advertisingKeyGrantInvalid"
        case .keyAgreementUnavailable: return "keyAgreementUnavailable"
        }
    }
}
