// A session the TPM started for us (Part 1 §19): its handle, the key both sides derived, and
// the newest nonce the TPM sent, which the next command's HMAC must include (nonces roll with
// every command that uses the session, Part 1 §19.6.3).
import Protocol

final class TPM2Session {
    let handle: UInt32
    let type: UInt8
    /// Session attributes sent with each use (continueSession, decrypt, encrypt).
    let attributes: UInt8
    private(set) var sessionKey: Bytes
    var nonceTPM: Bytes

    init(handle: UInt32, type: UInt8, attributes: UInt8, sessionKey: Bytes, nonceTPM: Bytes) {
        self.handle = handle
        self.type = type
        self.attributes = attributes
        self.sessionKey = sessionKey
        self.nonceTPM = nonceTPM
    }

    /// Forgets the key (the handle is flushed by the caller).
    func wipe() { ConstantTime.wipe(&sessionKey) }

    deinit { wipe() }
}

/// Who authorises a handle: TPM_RS_PW with the empty password, or a session.
enum TPM2Authorizer {
    case password
    case session(TPM2Session)
}
