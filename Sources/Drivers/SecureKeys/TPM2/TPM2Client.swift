// Runs one TPM command: frames it, lets each session authorise it (and encrypt its first
// parameter), sends it, checks the response (code, framing, each session's HMAC) and decrypts
// the first response parameter. Everything the vault does is a sequence of these calls.
import Protocol

/// Why a command failed: the transport (the TPM is unreachable), the TPM's response code, or a
/// response that is not what the command must return.
enum TPM2Failure: Error, Equatable {
    case transport(TPM2TransportError)
    case tpm(UInt32)
    case response(String)
}

struct TPM2Call {
    var code: UInt32
    var handles: [UInt32] = []
    /// The Names of the handles, for cpHash: needed when a session (not a password) authorises.
    var names: [Bytes] = []
    /// One per handle that needs authorisation (the first handles, Part 3 "Auth Index").
    var auths: [TPM2Authorizer] = []
    var parameters: Bytes = []
    var responseHandles = 0
}

struct TPM2Result {
    var handles: [UInt32]
    var parameters: Bytes
}

final class TPM2Client {
    private let transport: any TPM2Transport

    init(transport: any TPM2Transport) {
        self.transport = transport
    }

    func close() { transport.close() }

    func run(_ call: TPM2Call) throws(TPM2Failure) -> TPM2Result {
        var parameters = call.parameters
        defer { ConstantTime.wipe(&parameters) }
        var nonces: [Bytes] = []
        for auth in call.auths {
            guard case .session = auth else { nonces.append([]); continue }
            do { nonces.append(try SystemRandom().randomBytes(32)) } catch { throw .response("the host CSPRNG failed") }
        }
        // The session that decrypts (at most one) encrypts our first parameter before cpHash.
        for (index, auth) in call.auths.enumerated() {
            guard case .session(let session) = auth, session.attributes & TPM2SessionAttribute.decrypt != 0 else { continue }
            var cfb = TPM2SessionCrypto.cfbKey(sessionKey: session.sessionKey, nonceNewer: nonces[index], nonceOlder: session.nonceTPM)
            defer { ConstantTime.wipe(&cfb.key) }
            guard let encrypted = TPM2SessionCrypto.cryptFirstParameter(parameters, key: cfb.key, iv: cfb.iv, encrypt: true) else {
                throw .response("no sized first parameter to encrypt")
            }
            parameters = encrypted
        }
        let cpHash = TPM2SessionCrypto.commandParameterHash(code: call.code, names: call.names, parameters: parameters)
        let commandAuths = call.auths.enumerated().map { index, auth -> TPM2CommandAuth in
            guard case .session(let session) = auth else { return .emptyPassword }
            let hmac = TPM2SessionCrypto.commandHMAC(key: session.sessionKey, cpHash: cpHash, nonceCaller: nonces[index],
                                                     nonceTPM: session.nonceTPM, attributes: session.attributes)
            return TPM2CommandAuth(sessionHandle: session.handle, nonce: nonces[index], attributes: session.attributes, hmac: hmac)
        }
        var command = TPM2CommandFrame.encode(code: call.code, handles: call.handles, auths: commandAuths, parameters: parameters)
        defer { ConstantTime.wipe(&command) }
        guard command.count <= TPM2Limits.maxMessage else { throw .response("command of \(command.count) bytes") }
        var frame = try exchange(command, call)
        // TPM_RC_YIELDED, TPM_RC_TESTING and TPM_RC_RETRY (Part 2 §6.6.3 warnings) ask for the same
        // command again: the TPM did not run it, so no nonce rolled and the bytes stay valid. A
        // TPM that used a DA-protected object after an unorderly shutdown answers RETRY once
        // while it records that in NV.
        var tries = 1
        while Self.retryCodes.contains(frame.code) && tries < Self.maxTries {
            tries += 1
            frame = try exchange(command, call)
        }
        guard frame.code == 0 else { throw .tpm(frame.code) }
        var result = TPM2Result(handles: frame.handles, parameters: frame.parameters)
        let rpHash = TPM2SessionCrypto.responseParameterHash(code: call.code, parameters: frame.parameters)
        for (index, auth) in call.auths.enumerated() {
            let answer = frame.auths[index]
            guard case .session(let session) = auth else {
                guard answer.nonce.isEmpty, answer.hmac.isEmpty else { throw .response("password session answered with a nonce or HMAC") }
                continue
            }
            let expected = TPM2SessionCrypto.responseHMAC(key: session.sessionKey, rpHash: rpHash, nonceTPM: answer.nonce,
                                                          nonceCaller: nonces[index], attributes: answer.attributes)
            // A response whose HMAC does not verify may have been changed on the bus: nothing
            // in it is used.
            guard ConstantTime.equals(expected, answer.hmac) else { throw .response("the response HMAC did not verify") }
            session.nonceTPM = answer.nonce
            if session.attributes & TPM2SessionAttribute.encrypt != 0 {
                var cfb = TPM2SessionCrypto.cfbKey(sessionKey: session.sessionKey, nonceNewer: answer.nonce, nonceOlder: nonces[index])
                defer { ConstantTime.wipe(&cfb.key) }
                guard let decrypted = TPM2SessionCrypto.cryptFirstParameter(result.parameters, key: cfb.key, iv: cfb.iv, encrypt: false) else {
                    throw .response("no sized first response parameter to decrypt")
                }
                result.parameters = decrypted
            }
        }
        return result
    }

    /// TPM_RC_YIELDED (WARN + 0x008), TPM_RC_TESTING (WARN + 0x00A), TPM_RC_RETRY (WARN +
    /// 0x022), Part 2 §6.6.3; tpm2-tss's ESYS resubmits on the same three.
    static let retryCodes: Set<UInt32> = [0x908, 0x90A, 0x922]
    static let maxTries = 16

    private func exchange(_ command: Bytes, _ call: TPM2Call) throws(TPM2Failure) -> TPM2Response {
        let bytes: Bytes
        do { bytes = try transport.exchange(command) } catch { throw .transport(error) }
        do {
            return try TPM2CommandFrame.decode(bytes, handleCount: call.responseHandles, sessionCount: call.auths.count)
        } catch {
            throw .response("\(error)")
        }
    }
}
