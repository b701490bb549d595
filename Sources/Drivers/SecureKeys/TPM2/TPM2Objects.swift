// The TPM commands the vault is built from, each taking the ESYS context that `withContext`
// hands out (so the caller already holds the device lock), each freeing what ESYS allocated.
import CTSS2
import Protocol

extension TPM2Device {
    /// TPM2_CreatePrimary under the owner hierarchy (empty owner auth, the default on a board).
    func createPrimary(_ esys: OpaquePointer) throws(SecureKeyError) -> ESYS_TR {
        var sensitive = TPM2B_SENSITIVE_CREATE()
        var template = TPM2Templates.primary()
        var handle: ESYS_TR = ESYS_TR_NONE
        // Empty, but not NULL: the SAPI layer requires outsideInfo and creationPCR.
        var outsideInfo = TPM2B_DATA()
        var creationPCR = TPML_PCR_SELECTION()
        var outPublic: UnsafeMutablePointer<TPM2B_PUBLIC>?
        var creationData: UnsafeMutablePointer<TPM2B_CREATION_DATA>?
        var creationHash: UnsafeMutablePointer<TPM2B_DIGEST>?
        var ticket: UnsafeMutablePointer<TPMT_TK_CREATION>?
        let code = library.createPrimary(esys, ESYS_TR_RH_OWNER, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE,
                                         &sensitive, &template, &outsideInfo, &creationPCR, &handle,
                                         &outPublic, &creationData, &creationHash, &ticket)
        _ = take(outPublic); _ = take(creationData); _ = take(creationHash); _ = take(ticket)
        if let number = TPM2Code.format1Error(code), [TPM2Code.authFail, TPM2Code.badAuth].contains(number) {
            throw .locked(device: deviceName, fix: "the owner hierarchy has an auth value; the vault needs it empty (tpm2_changeauth -c owner with the old value)")
        }
        try check(code, "CreatePrimary (owner, ECC P-256 storage key)")
        return handle
    }

    /// TPM2_Create under `parent`; returns the new object's blobs (not loaded).
    func create(_ esys: OpaquePointer, parent: ESYS_TR, session: ESYS_TR, template: TPM2B_PUBLIC,
                sensitive: inout TPM2B_SENSITIVE_CREATE, what: String) throws(SecureKeyError) -> (public: TPM2B_PUBLIC, private: TPM2B_PRIVATE) {
        var template = template
        var outsideInfo = TPM2B_DATA()
        var creationPCR = TPML_PCR_SELECTION()
        var outPrivate: UnsafeMutablePointer<TPM2B_PRIVATE>?
        var outPublic: UnsafeMutablePointer<TPM2B_PUBLIC>?
        var creationData: UnsafeMutablePointer<TPM2B_CREATION_DATA>?
        var creationHash: UnsafeMutablePointer<TPM2B_DIGEST>?
        var ticket: UnsafeMutablePointer<TPMT_TK_CREATION>?
        let code = library.create(esys, parent, session, ESYS_TR_NONE, ESYS_TR_NONE, &sensitive, &template, &outsideInfo, &creationPCR,
                                  &outPrivate, &outPublic, &creationData, &creationHash, &ticket)
        let privateArea = take(outPrivate)
        let publicArea = take(outPublic)
        _ = take(creationData); _ = take(creationHash); _ = take(ticket)
        try check(code, "Create (\(what))")
        guard let privateArea, let publicArea else {
            throw .operationFailed(operation: "TPM2 Create (\(what))", code: 0, detail: "no object returned")
        }
        return (publicArea, privateArea)
    }

    /// TPM2_Load. A blob that the TPM refuses on integrity grounds was made under another
    /// primary: another board's TPM, or this one after TPM2_Clear changed the owner seed.
    func load(_ esys: OpaquePointer, parent: ESYS_TR, public publicArea: TPM2B_PUBLIC, private privateArea: TPM2B_PRIVATE,
              files: TPM2BlobFiles) throws(SecureKeyError) -> ESYS_TR {
        var publicArea = publicArea
        var privateArea = privateArea
        var handle: ESYS_TR = ESYS_TR_NONE
        let code = library.load(esys, parent, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE, &privateArea, &publicArea, &handle)
        guard code != TSS2_RC_SUCCESS else { return handle }
        let number = TPM2Code.format1Error(code)
        if number == TPM2Code.integrity || number == TPM2Code.binding || code & 0xFFF == TPM2Code.sensitive {
            throw .foreignObject(
                what: "\(files.name) blobs in \(files.directory) (the TPM refused them: \(library.describe(code)))",
                fix: "this state directory was made on another board's TPM, or this TPM was cleared since; restore this "
                    + "board's own state directory, or move the car to a new identity (re-pairing every key)")
        }
        if number != nil {
            // A parameter the TPM found structurally wrong (a bad point, attributes, sizes):
            // the files were changed, not merely moved.
            throw .malformed(what: "\(files.name) blobs in \(files.directory) (the TPM refused them: \(library.describe(code)))")
        }
        throw error(code, "Load (\(files.name))")
    }

    /// An authorisation session salted with the primary's key, so its session key never
    /// crosses the bus in the clear, with AES-128-CFB parameter encryption in the directions
    /// given (`attributes`: TPMA_SESSION_DECRYPT for secrets we send, _ENCRYPT for secrets the
    /// TPM returns). `type` is TPM2_SE_HMAC, or TPM2_SE_POLICY for a PCR-bound object.
    func startSaltedSession(_ esys: OpaquePointer, primary: ESYS_TR, type: TPM2_SE, attributes: TPMA_SESSION) throws(SecureKeyError) -> ESYS_TR {
        var symmetric = TPMT_SYM_DEF()
        symmetric.algorithm = TPM2_ALG_AES
        symmetric.keyBits.aes = 128
        symmetric.mode.aes = TPM2_ALG_CFB
        var session: ESYS_TR = ESYS_TR_NONE
        try check(library.startAuthSession(esys, primary, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE,
                                           nil, type, &symmetric, TPM2_ALG_SHA256, &session), "StartAuthSession")
        let flags = TPMA_SESSION(TPMA_SESSION_CONTINUESESSION) | attributes
        let code = library.setSessionAttributes(esys, session, flags, 0xFF)
        guard code == TSS2_RC_SUCCESS else {
            flush(esys, session)
            throw error(code, "TRSess_SetAttributes")
        }
        return session
    }

    /// The policy digest of PolicyPCR over the current values of `selection`, from a trial
    /// session (the TPM reads its own PCRs; nothing is computed here).
    func pcrPolicyDigest(_ esys: OpaquePointer, selection: TPML_PCR_SELECTION) throws(SecureKeyError) -> Bytes {
        var symmetric = TPMT_SYM_DEF()
        symmetric.algorithm = TPM2_ALG_NULL
        var session: ESYS_TR = ESYS_TR_NONE
        try check(library.startAuthSession(esys, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE,
                                           nil, TPM2_SE_TRIAL, &symmetric, TPM2_ALG_SHA256, &session), "StartAuthSession (trial)")
        defer { flush(esys, session) }
        try policyPCR(esys, session: session, selection: selection)
        var digest: UnsafeMutablePointer<TPM2B_DIGEST>?
        let code = library.policyGetDigest(esys, session, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, &digest)
        let value = take(digest)
        try check(code, "PolicyGetDigest")
        guard let value, value.size == 32 else {
            throw .operationFailed(operation: "TPM2 PolicyGetDigest", code: 0, detail: "not a SHA-256 digest")
        }
        return TPM2Buffers.load(value.buffer, size: value.size)
    }

    /// TPM2_PolicyPCR with an empty digest: the TPM binds the session to its current values.
    func policyPCR(_ esys: OpaquePointer, session: ESYS_TR, selection: TPML_PCR_SELECTION) throws(SecureKeyError) {
        var empty = TPM2B_DIGEST()
        var selection = selection
        try check(library.policyPCR(esys, session, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, &empty, &selection), "PolicyPCR")
    }

    /// A TPM2_PT_VAR property's value (e.g. the lockout counter).
    func variableProperty(_ esys: OpaquePointer, _ property: UInt32) throws(SecureKeyError) -> UInt32 {
        var more: TPMI_YES_NO = 0
        var data: UnsafeMutablePointer<TPMS_CAPABILITY_DATA>?
        let code = library.getCapability(esys, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, TPM2_CAP_TPM_PROPERTIES, property, 1, &more, &data)
        let capability = take(data)
        try check(code, "GetCapability (property 0x\(String(property, radix: 16)))")
        guard let capability, capability.data.tpmProperties.count >= 1,
              capability.data.tpmProperties.tpmProperty.0.property == property else {
            throw .operationFailed(operation: "TPM2 GetCapability", code: 0, detail: "property 0x\(String(property, radix: 16)) not reported")
        }
        return capability.data.tpmProperties.tpmProperty.0.value
    }

    /// The manufacturer ID (four ASCII letters, e.g. "IBM", "STM", "IFX"), or nil.
    func manufacturer(_ esys: OpaquePointer) -> String? {
        var more: TPMI_YES_NO = 0
        var data: UnsafeMutablePointer<TPMS_CAPABILITY_DATA>?
        let code = library.getCapability(esys, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, TPM2_CAP_TPM_PROPERTIES,
                                         TPM2Code.propertyManufacturer, 1, &more, &data)
        guard code == TSS2_RC_SUCCESS, let capability = take(data),
              capability.data.tpmProperties.count >= 1,
              capability.data.tpmProperties.tpmProperty.0.property == TPM2Code.propertyManufacturer else { return nil }
        let value = capability.data.tpmProperties.tpmProperty.0.value
        let shifts: [UInt32] = [24, 16, 8, 0]
        let letters = shifts.map { UInt8(truncatingIfNeeded: value >> $0) }
            .filter { $0 >= 0x20 && $0 < 0x7F }
        return String(decoding: letters, as: UTF8.self).trimmingSpaces
    }
}

private extension String {
    var trimmingSpaces: String {
        var text = Substring(self)
        while text.last == " " { text = text.dropLast() }
        while text.first == " " { text = text.dropFirst() }
        return String(text)
    }
}
