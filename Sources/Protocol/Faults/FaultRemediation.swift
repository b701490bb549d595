// What a phone, owner or field engineer should do about each fault. Kept next to the codes so
// docs/protocol.md, the CLI and the app show the same advice (a test checks the doc table).

extension FaultCode {
    public var remediation: String {
        switch self {
        case .unknownKey:
            return "This phone key is not enrolled in this car. Enroll it as owner or present a share certificate."
        case .revoked:
            return "This key was revoked. Ask the owner for a new share; a revoked key cannot be reinstated."
        case .expired:
            return "The key's validity window has ended. Ask the owner for a new share."
        case .notYetValid:
            return "The key's validity window has not started yet. Retry after its not-before time."
        case .insufficientPermission:
            return "The key does not grant this command. Ask the owner for a share with the needed permission."
        case .badSignature:
            return "The signature did not verify with the enrolled key. Check that the phone uses the enrolled key and a supported encoding (DER or 64-byte raw)."
        case .unknownChallenge:
            return "The AuthResponse names a challenge this link was not given. Start again with a new Hello."
        case .reusedChallenge:
            return "The challenge was already used (challenges are single use). Start again with a new Hello."
        case .challengeExpired:
            return "The AuthResponse arrived after the challenge lifetime (10 s by default). Answer faster or start again."
        case .staleTimestamp:
            return "The phone clock differs from the car's trusted clock by more than the tolerance (60 s). Synchronise the phone clock."
        case .replayedCounter:
            return "A command counter was used twice. The phone must use a new, higher counter for every command."
        case .outOfOrderCounter:
            return "A command counter was lower than one already accepted. The phone must send counters in increasing order."
        case .expiredCommand:
            return "The command's expiry time has passed on the car's session clock. Compute expiresAt from the carTime in SessionAccepted and resend."
        case .wrongVehicle:
            return "The vehicle ID does not match. Connect to the intended car."
        case .clockNotTrusted:
            return "The car has no trusted time yet, so it refuses what has a time limit (a share's validity window, a remote command's or a configuration's expiry). On a real car let NTP synchronise its clock (systemd-timesyncd or chrony); a simulated car trusts this machine's clock only when started with `carkey-agent run --simulate --clock-sync yes`. Owner keys on the phone link work without it."
        case .busy:
            return "The car is processing another command or has no free link slots. Retry shortly."
        case .rateLimited:
            return "Too many failures from this link. Wait for the back-off to end (30 s, doubling up to 15 min)."
        case .malformedMessage:
            return "The message does not follow docs/protocol.md (length, field or type). Check the phone implementation with `carkey decode`."
        case .unsupportedVersion:
            return "The car speaks message version 1 (pairing version 2) only. Update the phone app or the car."
        case .lifetimeTooLong:
            return "The command's expiry is more than 30 s in the future on the car's session clock. Use a shorter lifetime."
        case .keychainFull:
            return "All key slots are in use. Revoke a key before adding another."
        case .decryptionFailed:
            return "An encrypted message failed authentication (wrong key, tampering or corruption). Start a new session."
        case .unexpectedMessage:
            return "The message is valid but not allowed in the link's current state. Follow the Hello, Challenge, AuthResponse order."
        case .sessionExpired:
            return "The session lifetime (300 s by default) has ended or its counters are exhausted. Reconnect and handshake again."
        case .invalidCertificate:
            return "The share certificate in Hello did not verify for this car and key. Ask the owner to issue it again."
        case .actuationFailed:
            return "The car accepted the command but could not carry it out. Check the vehicle state in the response and the car's actuators."
        case .internalError:
            return "The car hit an internal error (for example its random source failed). Retry; report it if it persists."
        case .invalidRevocation:
            return "The revocation did not verify: it must be signed by an enrolled, unrevoked owner key of this car. Sign it again with an owner key."
        case .lastOwnerKey:
            return "This is the car's last owner key and cannot be revoked. Enroll another owner (pairing window) first."
        case .pairingClosed:
            return "No pairing window is open, or it expired or was used. Open a new one on the car and enter its code within 60 s."
        case .wrongPairingCode:
            return "The pairing code does not match the one the car shows. Check it and retry; five wrong codes close the window."
        case .notInProximity:
            return "UWB ranging did not place the key in the unlock zone. Walk up to the car with UWB enabled and retry."
        case .rangingFailed:
            return "No valid UWB range was measured (timeouts, invalid STS or bad frames). Keep the phone unobstructed near the car and retry."
        case .rangingUnsupported:
            return "The car cannot range with these parameters, or has no UWB module. Ask the car what it accepts (ranging capabilities, docs/protocol.md 19.2) and propose within it, with a new session ID."
        case .pairingVersion:
            return "The car pairs with SPAKE2+ (pairing version 2) only; this app speaks an older pairing. Update the app and enter the code again."
        }
    }
}
