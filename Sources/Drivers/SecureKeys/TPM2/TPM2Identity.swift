// The car identity key held in the TPM: signing and ECDH run there; only the public key is
// ever outside it. Every call goes through the device lock (one TPM connection for the agent).
import Protocol

final class TPM2Identity: ProtocolKeyAgreement, @unchecked Sendable {
    // @unchecked Sendable: the handle is the device's (`device.identity`), read under its lock,
    // so a reconnect that reloads the identity gives this key the new handle.
    let publicKey: P256PublicKey
    private let device: TPM2Device

    init(device: TPM2Device, publicArea: TPM2PublicArea) throws(SecureKeyError) {
        self.device = device
        guard let x = TPM2Buffers.padded32(publicArea.x), let y = TPM2Buffers.padded32(publicArea.y),
              let key = try? P256PublicKey(sec1: [0x04] + x + y) else {
            throw .malformed(what: "TPM identity public area (not a P-256 point)")
        }
        publicKey = key
    }

    /// The identity's handle; deviceMissing when it is not loaded (the vault was closed).
    private func handle() throws(SecureKeyError) -> UInt32 {
        guard let identity = device.identity else {
            throw .deviceMissing(device: device.deviceName, fix: "the TPM key vault was closed; open it again")
        }
        return identity.handle
    }

    /// ECDSA-SHA256 (TPM2_Sign, Part 3 §20.2): the digest is computed here (the TPM's
    /// hash-then-sign would cost a round trip per block), the TPM signs it. The TPM returns r
    /// and s as minimal big-endian integers; the raw form pads each to 32 bytes.
    func signature(for message: Bytes) throws -> ECDSASignature {
        var parameters = TPM2Writer()
        parameters.sized(SHA256.hash(message))
        parameters.u16(TPM2Algorithm.ecdsa) // TPMT_SIG_SCHEME
        parameters.u16(TPM2Algorithm.sha256)
        // A NULL ticket (TPMT_TK_HASHCHECK, Part 2 §10.7.6): the key is unrestricted, so the TPM
        // need not have hashed the message.
        parameters.u16(TPM2Tag.hashCheck)
        parameters.u32(TPM2Handle.null)
        parameters.sized([])
        let (r, s): (Bytes, Bytes) = try device.withContext { client throws(SecureKeyError) in
            let call = TPM2Call(code: TPM2CommandCode.sign, handles: [try handle()], auths: [.password], parameters: parameters.bytes)
            let result = try device.run(client, call, "Sign (identity, ECDSA-SHA256)")
            // TPMT_SIGNATURE (Part 2 §11.3.4): sigAlg, then TPMS_SIGNATURE_ECDSA: hash, r, s.
            return try device.parse("Sign", result.parameters) { reader throws(TPM2WireError) in
                let algorithm = try reader.u16()
                guard algorithm == TPM2Algorithm.ecdsa else { throw .unexpected(what: "signature algorithm (not ECDSA)", value: UInt32(algorithm)) }
                _ = try reader.u16()
                return (try reader.sized("r", limit: 66), try reader.sized("s", limit: 66))
            }
        }
        guard let r = TPM2Buffers.padded32(r), let s = TPM2Buffers.padded32(s) else {
            throw SecureKeyError.malformed(what: "TPM signature (r or s longer than 32 bytes)")
        }
        return try ECDSASignature(rawRepresentation: r + s)
    }

    /// TPM2_ECDH_ZGen (Part 3 §14.5): the x coordinate of d·peer, computed inside the TPM. The
    /// peer point is already checked to be on the curve (P256PublicKey); the TPM checks again.
    func sharedSecret(with peer: P256PublicKey) throws -> Bytes {
        var parameters = TPM2Writer()
        parameters.sized { point in
            point.sized(Array(peer.sec1[1...32]))
            point.sized(Array(peer.sec1[33...64]))
        }
        var result: TPM2Result = try device.withContext { client throws(SecureKeyError) in
            let call = TPM2Call(code: TPM2CommandCode.ecdhZGen, handles: [try handle()], auths: [.password], parameters: parameters.bytes)
            return try device.run(client, call, "ECDH_ZGen (identity)")
        }
        defer { ConstantTime.wipe(&result.parameters) }
        var x = try device.parse("ECDH_ZGen", result.parameters) { reader throws(TPM2WireError) in
            var point = try reader.sub(Int(try reader.u16()))
            let x = try point.sized("x", limit: 66)
            _ = try point.sized("y", limit: 66)
            try point.finish()
            return x
        }
        defer { ConstantTime.wipe(&x) }
        guard let padded = TPM2Buffers.padded32(x) else {
            throw SecureKeyError.malformed(what: "TPM ECDH result (x longer than 32 bytes)")
        }
        return padded
    }
}
