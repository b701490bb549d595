// The rules a conformance report checks a phone against, each named after its place in
// docs/protocol.md. The order of the cases is the order of a checklist: transport, decoding,
// Hello, AuthResponse, session, certificates and pairing.

public enum ConformanceRule: String, CaseIterable, Sendable, Comparable {
    case framing = "16-framing"
    case handshakeDeadline = "16-deadline"
    case backlog = "16-backlog"
    case rateLimit = "R0"
    case decode = "R1"
    case order = "R2"
    case slot = "H1"
    case helloRate = "H1a"
    case key = "H2"
    case keyUsable = "H3"
    case ephemeralKey = "H4"
    case oneHello = "H6"
    case challenge = "A1"
    case challengeLifetime = "A3"
    case signature = "A4"
    case timestamp = "A5"
    case keyAgain = "A6"
    case sessionLifetime = "S0"
    case sessionRateLimit = "S1"
    case sessionMessage = "S2"
    case decryption = "S3"
    case counter = "S4"
    case counterSequence = "12.4"
    case plaintext = "S5"
    case oneCommand = "S6"
    case keyInSession = "S7"
    case permission = "S8"
    case expiry = "S9"
    case revocation = "S9a"
    case ranging = "S9b"
    case outcome = "S10"
    case certificate = "18.3"
    case pairingVersion = "18.6-version"
    case pairingWindow = "18.6-window"
    case pairingHello = "18.6-hello"
    case pairingOrder = "18.6-proof1"
    case pairingLate = "18.6-proof2"
    case pairingSignature = "18.6-proof4"
    case pairingCode = "18.6-proof5"
    case carCondition = "car"

    /// Whose doing a failed check is.
    public enum Kind: String, Sendable {
        /// The phone broke a rule: a failure is a deviation an app team must fix.
        case phone
        /// The car refused the key (unknown, revoked, out of its window, no permission) or
        /// the code the user typed: the app followed the protocol.
        case key
        /// The car's own condition (busy, rate limited after earlier failures, an actuator).
        case car
    }

    public var id: String { rawValue }

    public var kind: Kind {
        switch self {
        case .key, .keyUsable, .keyAgain, .keyInSession, .permission, .pairingWindow, .pairingCode: return .key
        case .rateLimit, .slot, .sessionRateLimit, .outcome, .carCondition: return .car
        default: return .phone
        }
    }

    /// Where docs/protocol.md states the rule.
    public var reference: String {
        switch self {
        case .framing, .handshakeDeadline, .backlog: return "protocol.md 16"
        case .decode: return "protocol.md 2, 11 R1"
        case .counterSequence: return "protocol.md 9, 12 step 4"
        case .outcome: return "protocol.md 11 S10, 19.7"
        case .certificate: return "protocol.md 18.3"
        case .pairingVersion, .pairingWindow, .pairingHello: return "protocol.md 18.6 car rules"
        case .pairingOrder: return "protocol.md 18.6 PairingProof 1"
        case .pairingLate: return "protocol.md 18.6 PairingProof 2"
        case .pairingSignature: return "protocol.md 18.6 PairingProof 4"
        case .pairingCode: return "protocol.md 18.6 PairingProof 5"
        case .carCondition: return "protocol.md 14"
        default: return "protocol.md 11 " + rawValue
        }
    }

    /// What passing the check means, as a checklist line.
    public var title: String {
        switch self {
        case .framing: return "every frame or fragment follows the transport's framing"
        case .handshakeDeadline: return "a session or enrollment within the handshake deadline"
        case .backlog: return "the phone keeps reading what the car sends"
        case .rateLimit: return "the phone's peer is not blocked by the rate limiter"
        case .decode: return "every message decodes (type, version, lengths, fields)"
        case .order: return "before a session only Hello, AuthResponse, PairingHello and PairingProof, in order"
        case .slot: return "the car has a link slot and handshake budget for the Hello"
        case .helloRate: return "Hellos of one key stay within the per-peer handshake budget (retry rule)"
        case .key: return "the key is enrolled, or its share certificate verifies"
        case .keyUsable: return "the key is usable now (not revoked, inside its validity window)"
        case .ephemeralKey: return "the phone ephemeral key is a valid P-256 point"
        case .oneHello: return "one Hello per handshake: none while a Challenge is outstanding"
        case .challenge: return "the AuthResponse answers this link's outstanding Challenge, once"
        case .challengeLifetime: return "the AuthResponse arrives within the challenge lifetime"
        case .signature: return "the AuthResponse signature verifies over challenge || timestamp (raw or DER)"
        case .timestamp: return "the AuthResponse timestamp is within the tolerance of the car's trusted clock"
        case .keyAgain: return "the key is still enrolled and usable at the AuthResponse"
        case .sessionLifetime: return "commands only within the session lifetime"
        case .sessionRateLimit: return "the session's peer is not blocked by the rate limiter"
        case .sessionMessage: return "only Command records inside a session"
        case .decryption: return "every Command decrypts under the phone-to-car key"
        case .counter: return "every Command counter is above the last accepted one"
        case .counterSequence: return "Command counters run 1, 2, 3 and so on without gaps"
        case .plaintext: return "every Command plaintext decodes (known command, lengths)"
        case .oneCommand: return "one command at a time: the next only after the Response"
        case .keyInSession: return "the key is still usable at each command"
        case .permission: return "the key holds each command's permission"
        case .expiry: return "expiresAt lies within the command lifetime on the session clock"
        case .revocation: return "a revoke command carries a revocation that verifies"
        case .ranging: return "a ranging setup the car can use"
        case .outcome: return "the car carried the command out"
        case .certificate: return "a presented share certificate is valid for this car and key"
        case .pairingVersion: return "pairing messages use pairing version 2 (SPAKE2+)"
        case .pairingWindow: return "pairing only while the pairing window is open"
        case .pairingHello: return "the PairingHello carries a valid phone key and shareP"
        case .pairingOrder: return "a PairingProof only after this link's PairingChallenge"
        case .pairingLate: return "the PairingProof arrives within the challenge lifetime"
        case .pairingSignature: return "the PairingProof signature verifies with the phone key"
        case .pairingCode: return "the pairing code matches the one the car shows"
        case .carCondition: return "the car could serve the request"
        }
    }

    public static func < (lhs: ConformanceRule, rhs: ConformanceRule) -> Bool {
        allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
    }
}
