// The storage key (the key that seals every record of the store) as a TPM sealed data object:
// 32 random bytes that only this TPM, under this board's primary (and, when bound, with the
// same PCR values), will hand back. Create and unseal both use a session salted to the primary
// with parameter encryption, so the key does not cross the TPM bus in the clear.
import CTSS2
import Protocol

extension TPM2Device {
    /// Unseals the stored key, or seals a new one when none is stored. The caller holds the lock.
    /// `daProtected` (out): whether the stored object lacks noDA (made by an older version).
    func storageKey(_ esys: OpaquePointer, primary: ESYS_TR, files: TPM2BlobFiles, binding: TPM2PCRBinding,
                    makeDAProtected: Bool, daProtected: inout Bool) throws(SecureKeyError) -> Bytes {
        if let blobs = try files.read(library) {
            guard TPM2Templates.isSealedData(blobs.public.publicArea) else {
                throw .malformed(what: "\(files.publicPath) (not a fixedTPM sealed data object)")
            }
            daProtected = TPM2Templates.isDAProtected(blobs.public.publicArea)
            return try unseal(esys, primary: primary, blobs: blobs, files: files, binding: binding)
        }
        daProtected = makeDAProtected
        return try seal(esys, primary: primary, files: files, binding: binding, daProtected: makeDAProtected)
    }

    private func seal(_ esys: OpaquePointer, primary: ESYS_TR, files: TPM2BlobFiles, binding: TPM2PCRBinding,
                      daProtected: Bool) throws(SecureKeyError) -> Bytes {
        let key: Bytes
        do { key = try SystemRandom().randomBytes(32) } catch {
            throw .operationFailed(operation: "random storage key", code: 0, detail: "the host CSPRNG failed")
        }
        let policy = binding.isBound ? try pcrPolicyDigest(esys, selection: binding.selection) : nil
        var sensitive = TPM2B_SENSITIVE_CREATE()
        defer { TPM2Buffers.wipe(&sensitive) }
        sensitive.sensitive.data.size = TPM2Buffers.store(key, into: &sensitive.sensitive.data.buffer)
        let session = try startSaltedSession(esys, primary: primary, type: TPM2_SE_HMAC, attributes: TPMA_SESSION(TPMA_SESSION_DECRYPT))
        defer { flush(esys, session) }
        let blobs = try create(esys, parent: primary, session: session, template: TPM2Templates.sealedData(policy: policy, daProtected: daProtected),
                               sensitive: &sensitive, what: "sealed storage key")
        try files.write(library, public: blobs.public, private: blobs.private)
        return key
    }

    private func unseal(_ esys: OpaquePointer, primary: ESYS_TR, blobs: (public: TPM2B_PUBLIC, private: TPM2B_PRIVATE),
                        files: TPM2BlobFiles, binding: TPM2PCRBinding) throws(SecureKeyError) -> Bytes {
        let object = try load(esys, parent: primary, public: blobs.public, private: blobs.private, files: files)
        defer { flush(esys, object) }
        let session = try startSaltedSession(esys, primary: primary, type: binding.isBound ? TPM2_SE_POLICY : TPM2_SE_HMAC,
                                             attributes: TPMA_SESSION(TPMA_SESSION_ENCRYPT))
        defer { flush(esys, session) }
        if binding.isBound { try policyPCR(esys, session: session, selection: binding.selection) }
        var out: UnsafeMutablePointer<TPM2B_SENSITIVE_DATA>?
        let code = library.unseal(esys, object, session, ESYS_TR_NONE, ESYS_TR_NONE, &out)
        guard var data = takeSecret(out), code == TSS2_RC_SUCCESS else {
            let number = TPM2Code.format1Error(code)
            // POLICY_FAIL: the PCRs differ from those it was sealed to. AUTH_UNAVAILABLE (with
            // its session bits) / AUTH_TYPE: sealed with a PCR policy but the vault is now
            // configured without one, or the reverse.
            if number == TPM2Code.policyFail || code & 0xFFF == TPM2Code.authUnavailable || code & 0xFFF == TPM2Code.authType {
                throw .foreignObject(
                    what: "sealed storage key \(files.privatePath) (PCR binding: \(binding.isBound ? binding.description : "none configured"))",
                    fix: "the PCR values (or the vault's PCR list) differ from when the key was sealed: boot the firmware, "
                        + "boot loader and kernel it was sealed under, or restore the store from a backup and seal again")
            }
            throw error(code, "Unseal (storage key)")
        }
        defer { TPM2Buffers.wipe(&data) }
        var key = TPM2Buffers.load(data.buffer, size: data.size)
        guard key.count == 32 else {
            let count = key.count
            ConstantTime.wipe(&key)
            throw .malformed(what: "sealed storage key \(files.privatePath) (\(count) bytes, expected 32)")
        }
        return key
    }
}
