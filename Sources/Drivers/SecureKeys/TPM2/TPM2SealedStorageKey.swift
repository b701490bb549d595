// The storage key (the key that seals every record of the store) as a TPM sealed data object:
// 32 random bytes that only this TPM, under this board's primary (and, when bound, with the
// same PCR values), will hand back. Create and unseal both use a session salted to the primary
// with parameter encryption, so the key does not cross the TPM bus in the clear.
import Protocol

extension TPM2Device {
    /// Unseals the stored key, or seals a new one when none is stored. The caller holds the lock.
    /// `daProtected` (out): whether the stored object lacks noDA (made by an older version).
    func storageKey(_ client: TPM2Client, primary: TPM2LoadedObject, files: TPM2BlobFiles, binding: TPM2PCRBinding,
                    makeDAProtected: Bool, daProtected: inout Bool) throws(SecureKeyError) -> Bytes {
        if let blobs = try files.read() {
            guard TPM2Templates.isSealedData(blobs.publicArea) else {
                throw .malformed(what: "\(files.publicPath) (not a fixedTPM sealed data object)")
            }
            daProtected = TPM2Templates.isDAProtected(blobs.publicArea)
            return try unseal(client, primary: primary, blobs: blobs, files: files, binding: binding)
        }
        daProtected = makeDAProtected
        return try seal(client, primary: primary, files: files, binding: binding, daProtected: makeDAProtected)
    }

    private func seal(_ client: TPM2Client, primary: TPM2LoadedObject, files: TPM2BlobFiles, binding: TPM2PCRBinding,
                      daProtected: Bool) throws(SecureKeyError) -> Bytes {
        let key: Bytes
        do { key = try SystemRandom().randomBytes(32) } catch {
            throw .operationFailed(operation: "random storage key", code: 0, detail: "the host CSPRNG failed")
        }
        let policy = binding.isBound ? try pcrPolicyDigest(client, binding: binding) : nil
        // The key travels encrypted (the session decrypts TPM2_Create's first parameter, the
        // sensitive area).
        let session = try startSaltedSession(client, primary: primary, type: TPM2SessionType.hmac, attributes: TPM2SessionAttribute.decrypt)
        defer { flush(client, session.handle); session.wipe() }
        let blobs = try create(client, parent: primary, auth: .session(session),
                               template: TPM2Templates.sealedData(policy: policy, daProtected: daProtected), data: key, what: "sealed storage key")
        try files.write(blobs)
        return key
    }

    private func unseal(_ client: TPM2Client, primary: TPM2LoadedObject, blobs: TPM2Blobs,
                        files: TPM2BlobFiles, binding: TPM2PCRBinding) throws(SecureKeyError) -> Bytes {
        let object = try load(client, parent: primary, blobs: blobs, files: files)
        defer { flush(client, object.handle) }
        let session = try startSaltedSession(client, primary: primary, type: binding.isBound ? TPM2SessionType.policy : TPM2SessionType.hmac,
                                             attributes: TPM2SessionAttribute.encrypt)
        defer { flush(client, session.handle); session.wipe() }
        if binding.isBound { try policyPCR(client, session: session.handle, binding: binding) }
        // TPM2_Unseal (Part 3 §12.7): the key comes back encrypted under the session.
        let call = TPM2Call(code: TPM2CommandCode.unseal, handles: [object.handle], names: [object.name], auths: [.session(session)])
        var result: TPM2Result
        do { result = try client.run(call) } catch {
            if case .tpm(let code) = error {
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
            }
            throw self.error(error, "Unseal (storage key)")
        }
        defer { ConstantTime.wipe(&result.parameters) }
        var key = try parse("Unseal (storage key)", result.parameters) { reader throws(TPM2WireError) in
            try reader.sized("outData", limit: 128)
        }
        guard key.count == 32 else {
            let count = key.count
            ConstantTime.wipe(&key)
            throw .malformed(what: "sealed storage key \(files.privatePath) (\(count) bytes, expected 32)")
        }
        return key
    }
}
