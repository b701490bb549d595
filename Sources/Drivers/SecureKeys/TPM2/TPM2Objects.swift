// The TPM commands the vault is built from (Part 3), each taking the connection that
// `withContext` hands out (so the caller already holds the device lock).
import Protocol

extension TPM2Device {
    /// TPM2_CreatePrimary under the owner hierarchy (Part 3 §24.1), empty owner auth (the
    /// default on a board) through TPM_RS_PW.
    func createPrimary(_ client: TPM2Client) throws(SecureKeyError) -> TPM2LoadedObject {
        var parameters = TPM2Writer()
        parameters.sized { sensitive in
            sensitive.sized([]) // userAuth
            sensitive.sized([]) // data
        }
        parameters.raw(TPM2Templates.primary().sizedBytes)
        parameters.sized([]) // outsideInfo
        parameters.u32(0) // creationPCR: an empty TPML_PCR_SELECTION
        let call = TPM2Call(code: TPM2CommandCode.createPrimary, handles: [TPM2Handle.owner], auths: [.password],
                            parameters: parameters.bytes, responseHandles: 1)
        let result: TPM2Result
        do { result = try client.run(call) } catch {
            if case .tpm(let code) = error, let number = TPM2Code.format1Error(code), [TPM2Code.authFail, TPM2Code.badAuth].contains(number) {
                throw .locked(device: deviceName, fix: "the owner hierarchy has an auth value; the vault needs it empty (tpm2_changeauth -c owner with the old value)")
            }
            throw self.error(error, "CreatePrimary (owner, ECC P-256 storage key)")
        }
        // outPublic, creationData, creationHash, creationTicket, name (Part 3 §24.1.2).
        return try parse("CreatePrimary", result.parameters) { reader throws(TPM2WireError) in
            var outPublic = try reader.sub(Int(try reader.u16()))
            let area = try TPM2PublicArea.parse(&outPublic)
            try outPublic.finish()
            _ = try reader.raw(Int(try reader.u16())) // creationData
            _ = try reader.sized("creationHash", limit: 64)
            _ = try reader.u16(); _ = try reader.u32(); _ = try reader.sized("creationTicket", limit: 64)
            let name = try reader.sized("name", limit: 66)
            return TPM2LoadedObject(handle: result.handles[0], name: name, publicArea: area)
        }
    }

    /// Reads a response's parameters with `body`; a response that does not parse is an error
    /// of the command that returned it.
    func parse<T>(_ operation: String, _ bytes: Bytes, _ body: (inout TPM2Reader) throws(TPM2WireError) -> T) throws(SecureKeyError) -> T {
        var reader = TPM2Reader(bytes)
        do {
            let value = try body(&reader)
            try reader.finish()
            return value
        } catch {
            throw .operationFailed(operation: "TPM2 \(operation)", code: 0, detail: "unusable response: \(error)")
        }
    }

    /// TPM2_Create under `parent` (Part 3 §12.1); returns the new object's TPM2B_PUBLIC and
    /// TPM2B_PRIVATE as the TPM marshalled them (what the blob files hold), not loaded.
    func create(_ client: TPM2Client, parent: TPM2LoadedObject, auth: TPM2Authorizer, template: TPM2PublicArea,
                data: Bytes, what: String) throws(SecureKeyError) -> TPM2Blobs {
        var parameters = TPM2Writer()
        parameters.sized { sensitive in
            sensitive.sized([]) // userAuth: empty
            sensitive.sized(data)
        }
        parameters.raw(template.sizedBytes)
        parameters.sized([]) // outsideInfo
        parameters.u32(0) // creationPCR
        var call = TPM2Call(code: TPM2CommandCode.create, handles: [parent.handle], names: [parent.name], auths: [auth],
                            parameters: parameters.bytes)
        // The call's copy shares the writer's buffer: dropped first, so the wipe is in place.
        defer { call.parameters = []; parameters.wipe() }
        let result = try run(client, call, "Create (\(what))")
        return try parse("Create (\(what))", result.parameters) { reader throws(TPM2WireError) in
            let privateSize = Int(try reader.u16())
            let privateBytes = try reader.raw(privateSize)
            let publicSize = Int(try reader.u16())
            let publicBytes = try reader.raw(publicSize)
            var publicReader = TPM2Reader(publicBytes)
            let area = try TPM2PublicArea.parse(&publicReader)
            try publicReader.finish()
            _ = try reader.raw(Int(try reader.u16())) // creationData
            _ = try reader.sized("creationHash", limit: 64)
            _ = try reader.u16(); _ = try reader.u32(); _ = try reader.sized("creationTicket", limit: 64)
            var publicBlob = TPM2Writer()
            publicBlob.sized(publicBytes)
            var privateBlob = TPM2Writer()
            privateBlob.sized(privateBytes)
            return TPM2Blobs(public: publicBlob.bytes, private: privateBlob.bytes, publicArea: area)
        }
    }

    /// TPM2_Load (Part 3 §12.2). A blob that the TPM refuses on integrity grounds was made under
    /// another primary: another board's TPM, or this one after TPM2_Clear changed the owner seed.
    func load(_ client: TPM2Client, parent: TPM2LoadedObject, blobs: TPM2Blobs, files: TPM2BlobFiles) throws(SecureKeyError) -> TPM2LoadedObject {
        let call = TPM2Call(code: TPM2CommandCode.load, handles: [parent.handle], auths: [.password],
                            parameters: blobs.private + blobs.public, responseHandles: 1)
        let result: TPM2Result
        do { result = try client.run(call) } catch {
            guard case .tpm(let code) = error else { throw self.error(error, "Load (\(files.name))") }
            let number = TPM2Code.format1Error(code)
            let text = TPM2CommandFrame.describe(code)
            if number == TPM2Code.integrity || number == TPM2Code.binding || code & 0xFFF == TPM2Code.sensitive {
                throw .foreignObject(
                    what: "\(files.name) blobs in \(files.directory) (the TPM refused them: \(text))",
                    fix: "this state directory was made on another board's TPM, or this TPM was cleared since; restore this "
                        + "board's own state directory, or move the car to a new identity (re-pairing every key)")
            }
            if number != nil {
                // A parameter the TPM found structurally wrong (a bad point, attributes, sizes):
                // the files were changed, not merely moved.
                throw .malformed(what: "\(files.name) blobs in \(files.directory) (the TPM refused them: \(text))")
            }
            throw self.error(error, "Load (\(files.name))")
        }
        let name = try parse("Load", result.parameters) { reader throws(TPM2WireError) in try reader.sized("name", limit: 66) }
        return TPM2LoadedObject(handle: result.handles[0], name: name, publicArea: blobs.publicArea)
    }

    /// An authorisation session salted with the primary's key (TPM2_StartAuthSession, Part 3
    /// §11.1), so its session key never crosses the bus in the clear, bound to nothing, with
    /// AES-128-CFB parameter encryption in the directions given (`attributes`: decrypt for
    /// secrets we send, encrypt for secrets the TPM returns). `type` is HMAC, or POLICY for a
    /// PCR-bound object.
    func startSaltedSession(_ client: TPM2Client, primary: TPM2LoadedObject, type: UInt8, attributes: UInt8) throws(SecureKeyError) -> TPM2Session {
        var salt: (salt: Bytes, encryptedSalt: Bytes)
        let nonceCaller: Bytes
        do {
            salt = try TPM2SessionCrypto.eccSalt(tpmKeyX: primary.publicArea.x, tpmKeyY: primary.publicArea.y)
            nonceCaller = try SystemRandom().randomBytes(32)
        } catch let error as SecureKeyError {
            throw error
        } catch {
            throw .operationFailed(operation: "TPM2 StartAuthSession", code: 0, detail: "salt: \(error)")
        }
        defer { ConstantTime.wipe(&salt.salt) }
        var parameters = TPM2Writer()
        parameters.sized(nonceCaller)
        parameters.sized(salt.encryptedSalt)
        parameters.u8(type)
        parameters.u16(TPM2Algorithm.aes)
        parameters.u16(128)
        parameters.u16(TPM2Algorithm.cfb)
        parameters.u16(TPM2Algorithm.sha256)
        let call = TPM2Call(code: TPM2CommandCode.startAuthSession, handles: [primary.handle, TPM2Handle.null],
                            parameters: parameters.bytes, responseHandles: 1)
        let result = try run(client, call, "StartAuthSession")
        let nonceTPM = try parse("StartAuthSession", result.parameters) { reader throws(TPM2WireError) in try reader.sized("nonceTPM", limit: 64) }
        let key = TPM2SessionCrypto.sessionKey(salt: salt.salt, nonceTPM: nonceTPM, nonceCaller: nonceCaller)
        return TPM2Session(handle: result.handles[0], type: type, attributes: TPM2SessionAttribute.continueSession | attributes,
                           sessionKey: key, nonceTPM: nonceTPM)
    }

    /// The policy digest of PolicyPCR over the current values of `binding`'s PCRs, from a trial
    /// session (the TPM reads its own PCRs; nothing is computed here).
    func pcrPolicyDigest(_ client: TPM2Client, binding: TPM2PCRBinding) throws(SecureKeyError) -> Bytes {
        var parameters = TPM2Writer()
        do { parameters.sized(try SystemRandom().randomBytes(32)) } catch {
            throw .operationFailed(operation: "TPM2 StartAuthSession (trial)", code: 0, detail: "the host CSPRNG failed")
        }
        parameters.sized([]) // no salt
        parameters.u8(TPM2SessionType.trial)
        parameters.u16(TPM2Algorithm.null) // no parameter encryption
        parameters.u16(TPM2Algorithm.sha256)
        let started = try run(client, TPM2Call(code: TPM2CommandCode.startAuthSession, handles: [TPM2Handle.null, TPM2Handle.null],
                                               parameters: parameters.bytes, responseHandles: 1), "StartAuthSession (trial)")
        let session = started.handles[0]
        defer { flush(client, session) }
        try policyPCR(client, session: session, binding: binding)
        let result = try run(client, TPM2Call(code: TPM2CommandCode.policyGetDigest, handles: [session]), "PolicyGetDigest")
        let digest = try parse("PolicyGetDigest", result.parameters) { reader throws(TPM2WireError) in try reader.sized("policyDigest", limit: 64) }
        guard digest.count == 32 else {
            throw .operationFailed(operation: "TPM2 PolicyGetDigest", code: 0, detail: "not a SHA-256 digest")
        }
        return digest
    }

    /// TPM2_PolicyPCR with an empty digest (Part 3 §23.7): the TPM binds the session to its
    /// current values.
    func policyPCR(_ client: TPM2Client, session: UInt32, binding: TPM2PCRBinding) throws(SecureKeyError) {
        var parameters = TPM2Writer()
        parameters.sized([])
        parameters.raw(binding.selection)
        _ = try run(client, TPM2Call(code: TPM2CommandCode.policyPCR, handles: [session], parameters: parameters.bytes), "PolicyPCR")
    }

    /// One TPM_CAP_TPM_PROPERTIES value (TPM2_GetCapability, Part 3 §30.2), or nil when the TPM
    /// reports another property first (it does not have this one).
    func property(_ client: TPM2Client, _ property: UInt32) throws(SecureKeyError) -> UInt32? {
        var parameters = TPM2Writer()
        parameters.u32(TPM2Capability.tpmProperties)
        parameters.u32(property)
        parameters.u32(1)
        let what = "GetCapability (property 0x\(String(property, radix: 16)))"
        let result = try run(client, TPM2Call(code: TPM2CommandCode.getCapability, parameters: parameters.bytes), what)
        return try parse(what, result.parameters) { reader throws(TPM2WireError) -> UInt32? in
            _ = try reader.u8() // moreData
            guard try reader.u32() == TPM2Capability.tpmProperties else { throw .unexpected(what: "capability", value: 0) }
            let count = try reader.u32()
            guard count <= 127 else { throw .oversized(what: "property list", size: Int(count), limit: 127) }
            var found: UInt32?
            for index in 0..<count {
                let tag = try reader.u32()
                let value = try reader.u32()
                if index == 0 && tag == property { found = value }
            }
            return found
        }
    }

    /// A TPM_PT_VAR property's value (e.g. the lockout counter).
    func variableProperty(_ client: TPM2Client, _ property: UInt32) throws(SecureKeyError) -> UInt32 {
        guard let value = try self.property(client, property) else {
            throw .operationFailed(operation: "TPM2 GetCapability", code: 0, detail: "property 0x\(String(property, radix: 16)) not reported")
        }
        return value
    }

    /// The manufacturer ID (four ASCII letters, e.g. "IBM", "STM", "IFX"), or nil.
    func manufacturer(_ client: TPM2Client) -> String? {
        guard let value = try? property(client, TPM2Code.propertyManufacturer) else { return nil }
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
