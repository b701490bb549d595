// Command and response framing (Part 1 §18: command/response structure; §18.7-18.10: the
// authorization area). Pure functions of their inputs, so the bytes can be checked against
// known answers; the session crypto that fills in the HMACs lives in TPM2SessionCrypto.
import Protocol

/// One entry of a command's authorization area (Part 1 §18.7, TPMS_AUTH_COMMAND).
struct TPM2CommandAuth: Equatable {
    var sessionHandle: UInt32
    var nonce: Bytes
    var attributes: UInt8
    var hmac: Bytes

    /// TPM_RS_PW with an empty password (Part 1 §19.8.4): the vault's objects have empty auth.
    static let emptyPassword = TPM2CommandAuth(sessionHandle: TPM2Handle.password, nonce: [], attributes: 0, hmac: [])
}

/// One entry of a response's authorization area (Part 1 §18.8, TPMS_AUTH_RESPONSE).
struct TPM2ResponseAuth: Equatable {
    var nonce: Bytes
    var attributes: UInt8
    var hmac: Bytes
}

/// A parsed response: the code, and on success the handles, the parameter area (as received:
/// still encrypted when a session encrypted it) and the authorization area.
struct TPM2Response: Equatable {
    var code: UInt32
    var handles: [UInt32] = []
    var parameters: Bytes = []
    var auths: [TPM2ResponseAuth] = []
}

enum TPM2CommandFrame {
    static let maxNonce = 64
    static let maxDigest = 64

    /// The command bytes: tag (TPM_ST_SESSIONS when `auths` is not empty), commandSize,
    /// commandCode, handles, then authorizationSize and the area, then the parameters.
    static func encode(code: UInt32, handles: [UInt32], auths: [TPM2CommandAuth], parameters: Bytes) -> Bytes {
        var body = TPM2Writer()
        for handle in handles { body.u32(handle) }
        if !auths.isEmpty {
            var area = TPM2Writer()
            for auth in auths {
                area.u32(auth.sessionHandle)
                area.sized(auth.nonce)
                area.u8(auth.attributes)
                area.sized(auth.hmac)
            }
            body.u32(UInt32(area.bytes.count))
            body.raw(area.bytes)
        }
        body.raw(parameters)
        var command = TPM2Writer()
        command.u16(auths.isEmpty ? TPM2Tag.noSessions : TPM2Tag.sessions)
        command.u32(UInt32(10 + body.bytes.count))
        command.u32(code)
        command.raw(body.bytes)
        body.wipe()
        return command.bytes
    }

    /// Parses a complete response. `handleCount`: how many handles this command returns;
    /// `sessionCount`: how many authorizations the command carried (each gets one back).
    /// Never reads past `bytes`; any size that does not add up is a typed error.
    static func decode(_ bytes: Bytes, handleCount: Int, sessionCount: Int) throws(TPM2WireError) -> TPM2Response {
        guard bytes.count <= TPM2Limits.maxMessage else {
            throw .oversized(what: "response", size: bytes.count, limit: TPM2Limits.maxMessage)
        }
        var reader = TPM2Reader(bytes)
        let tag = try reader.u16()
        let size = try reader.u32()
        let code = try reader.u32()
        guard size == UInt32(bytes.count) else {
            throw size > UInt32(bytes.count) ? .truncated(offset: bytes.count, needed: Int(size) - bytes.count) : .trailing(count: bytes.count - Int(size))
        }
        guard tag == TPM2Tag.noSessions || tag == TPM2Tag.sessions else { throw .unexpected(what: "response tag", value: UInt32(tag)) }
        // An error response is the header alone (Part 1 §18.4); its tag is TPM_ST_NO_SESSIONS.
        guard code == 0 else {
            try reader.finish()
            return TPM2Response(code: code)
        }
        var frame = TPM2Response(code: 0)
        for _ in 0..<handleCount { frame.handles.append(try reader.u32()) }
        guard tag == TPM2Tag.sessions else {
            guard sessionCount == 0 else { throw .unexpected(what: "response tag without sessions", value: UInt32(tag)) }
            frame.parameters = try reader.raw(reader.remaining)
            return frame
        }
        let parameterSize = try reader.u32()
        guard parameterSize <= UInt32(reader.remaining) else {
            throw .truncated(offset: reader.offset, needed: Int(parameterSize) - reader.remaining)
        }
        frame.parameters = try reader.raw(Int(parameterSize))
        for _ in 0..<sessionCount {
            let nonce = try reader.sized("nonceTPM", limit: maxNonce)
            let attributes = try reader.u8()
            let hmac = try reader.sized("response HMAC", limit: maxDigest)
            frame.auths.append(TPM2ResponseAuth(nonce: nonce, attributes: attributes, hmac: hmac))
        }
        try reader.finish()
        return frame
    }

    /// A short text for a response code, for error details: the format-one error number and
    /// what it refers to (parameter, handle or session n), or the format-zero number.
    static func describe(_ code: UInt32) -> String {
        let hex = "0x" + String(code, radix: 16)
        if let number = TPM2Code.format1Error(code) {
            let which = (code & 0xF00) >> 8
            let subject = code & 0x040 != 0 ? "parameter \(which)" : (which & 0x8 != 0 ? "session \(which & 0x7)" : "handle \(which)")
            let name = format1Names[number] ?? "error 0x\(String(number & 0x3F, radix: 16))"
            return "TPM response \(hex): \(name) (\(which == 0 ? "the command" : subject))"
        }
        let name = format0Names[code & 0xFFF] ?? (code & 0x800 != 0 ? "warning" : "error")
        return "TPM response \(hex): \(name)"
    }

    private static let format1Names: [UInt32: String] = [
        TPM2Code.hash: "TPM_RC_HASH", TPM2Code.value: "TPM_RC_VALUE", TPM2Code.authFail: "TPM_RC_AUTH_FAIL (authorization failed)",
        TPM2Code.size: "TPM_RC_SIZE", TPM2Code.key: "TPM_RC_KEY", TPM2Code.policyFail: "TPM_RC_POLICY_FAIL (policy check failed)",
        TPM2Code.integrity: "TPM_RC_INTEGRITY (integrity check failed)", TPM2Code.badAuth: "TPM_RC_BAD_AUTH",
        TPM2Code.binding: "TPM_RC_BINDING (public and sensitive areas do not match)",
        TPM2Code.format1 + 0x026: "TPM_RC_CURVE", TPM2Code.format1 + 0x027: "TPM_RC_ECC_POINT",
        TPM2Code.format1 + 0x002: "TPM_RC_ATTRIBUTES", TPM2Code.format1 + 0x018: "TPM_RC_SCHEME",
    ]
    private static let format0Names: [UInt32: String] = [
        0x100: "TPM_RC_INITIALIZE (TPM2_Startup not run)", TPM2Code.authUnavailable: "TPM_RC_AUTH_UNAVAILABLE",
        TPM2Code.authType: "TPM_RC_AUTH_TYPE", TPM2Code.sensitive: "TPM_RC_SENSITIVE", TPM2Code.lockout: "TPM_RC_LOCKOUT",
        0x101: "TPM_RC_FAILURE", 0x143: "TPM_RC_COMMAND_CODE", 0x902: "TPM_RC_OBJECT_MEMORY", 0x903: "TPM_RC_SESSION_MEMORY",
        0x908: "TPM_RC_YIELDED", 0x909: "TPM_RC_CANCELED", 0x922: "TPM_RC_RETRY",
    ]
}
