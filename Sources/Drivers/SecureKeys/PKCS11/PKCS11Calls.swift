// The PKCS#11 calls the vault makes, on one open session. Only PKCS11Token.serialized hands
// these out, with its lock held: a session may run one operation at a time (C_SignInit then
// C_Sign must not interleave with another thread's C_EncryptInit).
import CPKCS11
import Protocol

struct PKCS11Calls {
    let module: PKCS11Module
    let session: CK_SESSION_HANDLE

    /// Every object matching `template` (at most `limit`).
    func find(_ template: [PKCS11Attribute], limit: Int = 8) throws(SecureKeyError) -> [CK_OBJECT_HANDLE] {
        let initFind = try module.function(\.C_FindObjectsInit, "C_FindObjectsInit")
        let findObjects = try module.function(\.C_FindObjects, "C_FindObjects")
        let finish = try module.function(\.C_FindObjectsFinal, "C_FindObjectsFinal")
        try PKCS11Template.with(template) { (array, count) throws(SecureKeyError) in
            try PKCS11ReturnValue.check(initFind(session, array, count), "C_FindObjectsInit")
        }
        var handles = [CK_OBJECT_HANDLE](repeating: 0, count: limit)
        var found: UInt = 0
        let rv = handles.withUnsafeMutableBufferPointer { findObjects(session, $0.baseAddress, UInt(limit), &found) }
        // Always end the search, or the session refuses every other operation.
        _ = finish(session)
        try PKCS11ReturnValue.check(rv, "C_FindObjects")
        return Array(handles.prefix(Int(found)))
    }

    /// One attribute's value (two calls: its length, then its bytes).
    func attribute(_ type: CK_ATTRIBUTE_TYPE, of object: CK_OBJECT_HANDLE, _ what: String) throws(SecureKeyError) -> Bytes {
        let get = try module.function(\.C_GetAttributeValue, "C_GetAttributeValue")
        var probe = CK_ATTRIBUTE(type: type, pValue: nil, ulValueLen: 0)
        try PKCS11ReturnValue.check(get(session, object, &probe, 1), "C_GetAttributeValue (\(what))")
        // CK_UNAVAILABLE_INFORMATION (all ones) for a sensitive or missing attribute.
        guard probe.ulValueLen != UInt.max, probe.ulValueLen <= 4096 else {
            throw SecureKeyError.malformed(what: "\(what) on the token (length \(probe.ulValueLen))")
        }
        var value = Bytes(repeating: 0, count: Int(probe.ulValueLen))
        let rv = value.withUnsafeMutableBytes { buffer -> CK_RV in
            var attribute = CK_ATTRIBUTE(type: type, pValue: buffer.baseAddress, ulValueLen: UInt(buffer.count))
            let rv = get(session, object, &attribute, 1)
            probe.ulValueLen = attribute.ulValueLen
            return rv
        }
        guard rv == CKR_OK else {
            ConstantTime.wipe(&value)
            throw PKCS11ReturnValue.failure(rv, "C_GetAttributeValue (\(what))")
        }
        // In place, not a copy: the value may be a shared secret, and a copy would leave the
        // first buffer unwiped.
        if Int(probe.ulValueLen) < value.count { value.removeSubrange(Int(probe.ulValueLen)...) }
        return value
    }

    func generateKeyPair(mechanism type: CK_MECHANISM_TYPE, publicTemplate: [PKCS11Attribute],
                         privateTemplate: [PKCS11Attribute]) throws(SecureKeyError) -> (public: CK_OBJECT_HANDLE, private: CK_OBJECT_HANDLE) {
        let generate = try module.function(\.C_GenerateKeyPair, "C_GenerateKeyPair")
        var mechanism = CK_MECHANISM(mechanism: type, pParameter: nil, ulParameterLen: 0)
        var publicKey: CK_OBJECT_HANDLE = 0
        var privateKey: CK_OBJECT_HANDLE = 0
        try PKCS11Template.with(publicTemplate) { (publicArray, publicCount) throws(SecureKeyError) in
            try PKCS11Template.with(privateTemplate) { (privateArray, privateCount) throws(SecureKeyError) in
                try PKCS11ReturnValue.check(generate(session, &mechanism, publicArray, publicCount, privateArray, privateCount,
                                                     &publicKey, &privateKey), "C_GenerateKeyPair")
            }
        }
        return (publicKey, privateKey)
    }

    func generateKey(mechanism type: CK_MECHANISM_TYPE, template: [PKCS11Attribute]) throws(SecureKeyError) -> CK_OBJECT_HANDLE {
        let generate = try module.function(\.C_GenerateKey, "C_GenerateKey")
        var mechanism = CK_MECHANISM(mechanism: type, pParameter: nil, ulParameterLen: 0)
        var key: CK_OBJECT_HANDLE = 0
        try PKCS11Template.with(template) { (array, count) throws(SecureKeyError) in
            try PKCS11ReturnValue.check(generate(session, &mechanism, array, count, &key), "C_GenerateKey")
        }
        return key
    }

    /// C_SignInit + C_Sign over `data` (for CKM_ECDSA: a digest), at most `maxLength` bytes out.
    func sign(_ data: Bytes, key: CK_OBJECT_HANDLE, mechanism type: CK_MECHANISM_TYPE, maxLength: Int) throws(SecureKeyError) -> Bytes {
        let signInit = try module.function(\.C_SignInit, "C_SignInit")
        let signData = try module.function(\.C_Sign, "C_Sign")
        var mechanism = CK_MECHANISM(mechanism: type, pParameter: nil, ulParameterLen: 0)
        try PKCS11ReturnValue.check(signInit(session, &mechanism, key), "C_SignInit")
        var input = data
        var output = Bytes(repeating: 0, count: maxLength)
        var length = UInt(maxLength)
        let rv = input.withUnsafeMutableBufferPointer { inBuffer in
            output.withUnsafeMutableBufferPointer { outBuffer in
                signData(session, inBuffer.baseAddress, UInt(inBuffer.count), outBuffer.baseAddress, &length)
            }
        }
        try PKCS11ReturnValue.check(rv, "C_Sign")
        return Array(output.prefix(Int(length)))
    }

    /// C_DeriveKey with `mechanism` and its parameter structure, into a new object made from
    /// `template`.
    func derive<Parameters>(from key: CK_OBJECT_HANDLE, mechanism type: CK_MECHANISM_TYPE, parameters: inout Parameters,
                            template: [PKCS11Attribute]) throws(SecureKeyError) -> CK_OBJECT_HANDLE {
        let deriveKey = try module.function(\.C_DeriveKey, "C_DeriveKey")
        var derived: CK_OBJECT_HANDLE = 0
        let size = MemoryLayout<Parameters>.size
        try withUnsafeMutablePointer(to: &parameters) { (pointer) throws(SecureKeyError) in
            var mechanism = CK_MECHANISM(mechanism: type, pParameter: UnsafeMutableRawPointer(pointer), ulParameterLen: UInt(size))
            try PKCS11Template.with(template) { (array, count) throws(SecureKeyError) in
                try PKCS11ReturnValue.check(deriveKey(session, &mechanism, key, array, count, &derived), "C_DeriveKey")
            }
        }
        return derived
    }

    func destroy(_ object: CK_OBJECT_HANDLE) throws(SecureKeyError) {
        let destroyObject = try module.function(\.C_DestroyObject, "C_DestroyObject")
        try PKCS11ReturnValue.check(destroyObject(session, object), "C_DestroyObject")
    }

    /// AES-GCM encrypt or decrypt of `input` with `key` (single part). Returns the module's
    /// answer code instead of throwing so the caller can tell "does not decrypt" from "device
    /// gone"; the output buffer is wiped and dropped on failure.
    func aesGCM(encrypt: Bool, key: CK_OBJECT_HANDLE, iv: Bytes, aad: Bytes, tagBits: Int,
                input: Bytes) throws(SecureKeyError) -> (rv: CK_RV, output: Bytes) {
        let start: CK_C_EncryptInit
        let run: CK_C_Encrypt
        // C_DecryptInit/C_Decrypt have the same C signatures as their encrypt twins.
        if encrypt {
            start = try module.function(\.C_EncryptInit, "C_EncryptInit")
            run = try module.function(\.C_Encrypt, "C_Encrypt")
        } else {
            start = try module.function(\.C_DecryptInit, "C_DecryptInit")
            run = try module.function(\.C_Decrypt, "C_Decrypt")
        }
        var ivCopy = iv
        var aadCopy = aad
        var source = input
        defer { ConstantTime.wipe(&source) }
        var output = Bytes(repeating: 0, count: input.count + tagBits / 8 + 16)
        var length = UInt(output.count)
        let rv: CK_RV = ivCopy.withUnsafeMutableBufferPointer { ivBuffer in
            aadCopy.withUnsafeMutableBufferPointer { aadBuffer in
                var parameters = CK_GCM_PARAMS(pIv: ivBuffer.baseAddress, ulIvLen: UInt(ivBuffer.count),
                                               ulIvBits: UInt(ivBuffer.count * 8), pAAD: aadBuffer.baseAddress,
                                               ulAADLen: UInt(aadBuffer.count), ulTagBits: UInt(tagBits))
                return withUnsafeMutablePointer(to: &parameters) { pointer in
                    var mechanism = CK_MECHANISM(mechanism: CKM_AES_GCM, pParameter: UnsafeMutableRawPointer(pointer),
                                                 ulParameterLen: UInt(MemoryLayout<CK_GCM_PARAMS>.size))
                    let started = start(session, &mechanism, key)
                    guard started == CKR_OK else { return started }
                    return source.withUnsafeMutableBufferPointer { inBuffer in
                        output.withUnsafeMutableBufferPointer { outBuffer in
                            run(session, inBuffer.baseAddress, UInt(inBuffer.count), outBuffer.baseAddress, &length)
                        }
                    }
                }
            }
        }
        guard rv == CKR_OK else {
            ConstantTime.wipe(&output)
            return (rv, [])
        }
        let result = Array(output.prefix(Int(length)))
        ConstantTime.wipe(&output)
        return (rv, result)
    }
}
