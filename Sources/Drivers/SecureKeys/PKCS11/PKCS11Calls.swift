// The PKCS#11 calls the vault makes, on one open session held by the bridge process
// (carkey-pkcs11-bridge, docs/pkcs11-bridge.md). Only PKCS11Token.serialized hands these out,
// with its lock held: a session may run one operation at a time, and the bridge answers one
// request at a time.
//
// Every build goes through the bridge, not only the static one: one code path, tested
// everywhere, and a module's crash or exit handlers stay out of the agent. The cost is one pipe
// round trip per call (docs/pkcs11-bridge.md, "Latency", measured on SoftHSM2).
import CPKCS11
import Protocol

struct PKCS11Calls {
    let bridge: PKCS11BridgeProcess

    /// One request and its status-0 result read by `result`; any other answer is a typed error.
    private func call<R>(_ request: Bytes, _ operation: String,
                         _ result: (Bytes) throws(PKCS11BridgeFrameError) -> R) throws(SecureKeyError) -> R {
        var request = request
        var answer = try bridge.exchange(&request)
        defer { answer.wipe() }
        return try read(answer, operation, result)
    }

    private func read<R>(_ answer: PKCS11BridgeAnswer, _ operation: String,
                         _ result: (Bytes) throws(PKCS11BridgeFrameError) -> R) throws(SecureKeyError) -> R {
        switch answer {
        case .ok(let payload):
            do { return try result(payload) } catch {
                bridge.stop()
                throw PKCS11BridgeLocation.unusable(bridge.executable, because: "its answer to \(operation) does not parse (\(error))")
            }
        case .pkcs11(let rv, let function):
            throw PKCS11ReturnValue.failure(CK_RV(rv), function)
        case .bridge(.attributeUnavailable, _):
            throw SecureKeyError.malformed(what: "\(operation) on the token (unavailable, or over \(PKCS11BridgeFrame.maxBytes) bytes)")
        case .bridge(let failure, let detail):
            throw SecureKeyError.operationFailed(operation: operation, code: UInt64(CKR_GENERAL_ERROR),
                                                 detail: "the PKCS#11 bridge refused it (\(failure), \(detail))")
        }
    }

    /// Every object matching `template` (at most `limit`).
    func find(_ template: [PKCS11Attribute], limit: Int = 8) throws(SecureKeyError) -> [CK_OBJECT_HANDLE] {
        try call(PKCS11BridgeRequest.find(limit: limit, template: template), "C_FindObjects") { (payload) throws(PKCS11BridgeFrameError) in
            try PKCS11BridgeResult.handles(payload).prefix(limit).map { CK_OBJECT_HANDLE($0) }
        }
    }

    /// One attribute's value.
    func attribute(_ type: CK_ATTRIBUTE_TYPE, of object: CK_OBJECT_HANDLE, _ what: String) throws(SecureKeyError) -> Bytes {
        try call(PKCS11BridgeRequest.attribute(type, of: object), what, PKCS11BridgeResult.value)
    }

    func generateKeyPair(mechanism type: CK_MECHANISM_TYPE, publicTemplate: [PKCS11Attribute],
                         privateTemplate: [PKCS11Attribute]) throws(SecureKeyError) -> (public: CK_OBJECT_HANDLE, private: CK_OBJECT_HANDLE) {
        let request = PKCS11BridgeRequest.generateKeyPair(mechanism: type, publicTemplate: publicTemplate, privateTemplate: privateTemplate)
        let (publicKey, privateKey) = try call(request, "C_GenerateKeyPair", PKCS11BridgeResult.handlePair)
        return (CK_OBJECT_HANDLE(publicKey), CK_OBJECT_HANDLE(privateKey))
    }

    func generateKey(mechanism type: CK_MECHANISM_TYPE, template: [PKCS11Attribute]) throws(SecureKeyError) -> CK_OBJECT_HANDLE {
        CK_OBJECT_HANDLE(try call(PKCS11BridgeRequest.generateKey(mechanism: type, template: template), "C_GenerateKey", PKCS11BridgeResult.handle))
    }

    /// C_SignInit + C_Sign over `data` (for CKM_ECDSA: a digest), at most `maxLength` bytes out.
    func sign(_ data: Bytes, key: CK_OBJECT_HANDLE, mechanism type: CK_MECHANISM_TYPE, maxLength: Int) throws(SecureKeyError) -> Bytes {
        let signature = try call(PKCS11BridgeRequest.sign(data, key: key, mechanism: type, maxLength: maxLength), "C_Sign", PKCS11BridgeResult.value)
        guard signature.count <= maxLength else { throw SecureKeyError.malformed(what: "C_Sign answer (\(signature.count) bytes)") }
        return signature
    }

    /// C_DeriveKey with CKM_ECDH1_DERIVE (no KDF) and the peer's point, into a new object made
    /// from `template`.
    func deriveECDH(from key: CK_OBJECT_HANDLE, publicData: Bytes, template: [PKCS11Attribute]) throws(SecureKeyError) -> CK_OBJECT_HANDLE {
        CK_OBJECT_HANDLE(try call(PKCS11BridgeRequest.deriveECDH(from: key, publicData: publicData, template: template), "C_DeriveKey",
                                  PKCS11BridgeResult.handle))
    }

    func destroy(_ object: CK_OBJECT_HANDLE) throws(SecureKeyError) {
        try call(PKCS11BridgeRequest.destroy(object), "C_DestroyObject", PKCS11BridgeResult.empty)
    }

    /// AES-GCM encrypt or decrypt of `input` with `key` (single part). Returns the module's
    /// answer code instead of throwing so the caller can tell "does not decrypt" from "device
    /// gone"; nothing is returned on failure.
    func aesGCM(encrypt: Bool, key: CK_OBJECT_HANDLE, iv: Bytes, aad: Bytes, tagBits: Int,
                input: Bytes) throws(SecureKeyError) -> (rv: CK_RV, output: Bytes) {
        // The input of an encrypt is the storage key: the request is wiped in place once sent.
        var request = PKCS11BridgeRequest.aesGCM(encrypt: encrypt, key: key, tagBits: tagBits, iv: iv, aad: aad, input: input)
        var answer = try bridge.exchange(&request)
        defer { answer.wipe() }
        if case .pkcs11(let rv, _) = answer { return (CK_RV(rv), []) }
        return (CKR_OK, try read(answer, encrypt ? "C_Encrypt" : "C_Decrypt", PKCS11BridgeResult.value))
    }
}
