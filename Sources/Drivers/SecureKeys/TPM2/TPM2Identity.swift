// The car identity key held in the TPM: signing and ECDH run there; only the public key is
// ever outside it. Every call goes through the device lock (one ESYS context for the agent).
import CTSS2
import Protocol

final class TPM2Identity: ProtocolKeyAgreement, @unchecked Sendable {
    // @unchecked Sendable: the handle is the device's (`device.identity`), read under its lock,
    // so a reconnect that reloads the identity gives this key the new handle.
    let publicKey: P256PublicKey
    private let device: TPM2Device

    init(device: TPM2Device, publicArea: TPMT_PUBLIC) throws(SecureKeyError) {
        self.device = device
        let point = publicArea.unique.ecc
        guard let x = TPM2Buffers.padded32(TPM2Buffers.load(point.x.buffer, size: point.x.size)),
              let y = TPM2Buffers.padded32(TPM2Buffers.load(point.y.buffer, size: point.y.size)),
              let key = try? P256PublicKey(sec1: [0x04] + x + y) else {
            throw .malformed(what: "TPM identity public area (not a P-256 point)")
        }
        publicKey = key
    }

    /// ECDSA-SHA256: the digest is computed here (the TPM's hash-then-sign would cost a round
    /// trip per block), the TPM signs it. The TPM returns r and s as minimal big-endian
    /// integers; the raw form pads each to 32 bytes.
    func signature(for message: Bytes) throws -> ECDSASignature {
        var digest = TPM2B_DIGEST()
        digest.size = TPM2Buffers.store(SHA256.hash(message), into: &digest.buffer)
        var scheme = TPMT_SIG_SCHEME()
        scheme.scheme = TPM2_ALG_ECDSA
        scheme.details.ecdsa.hashAlg = TPM2_ALG_SHA256
        // A NULL ticket: the key is unrestricted, so the TPM need not have hashed the message.
        var validation = TPMT_TK_HASHCHECK()
        validation.tag = TPM2_ST_HASHCHECK
        validation.hierarchy = TPM2_RH_NULL
        let signed: TPMT_SIGNATURE = try device.withContext { esys throws(SecureKeyError) in
            var out: UnsafeMutablePointer<TPMT_SIGNATURE>?
            let code = device.library.sign(esys, device.identity, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE,
                                           &digest, &scheme, &validation, &out)
            let value = device.take(out)
            try device.check(code, "Sign (identity, ECDSA-SHA256)")
            guard let value else { throw .operationFailed(operation: "TPM2 Sign", code: 0, detail: "no signature returned") }
            return value
        }
        guard signed.sigAlg == TPM2_ALG_ECDSA else {
            throw SecureKeyError.malformed(what: "TPM signature (algorithm 0x\(String(signed.sigAlg, radix: 16)), not ECDSA)")
        }
        let ecdsa = signed.signature.ecdsa
        guard let r = TPM2Buffers.padded32(TPM2Buffers.load(ecdsa.signatureR.buffer, size: ecdsa.signatureR.size)),
              let s = TPM2Buffers.padded32(TPM2Buffers.load(ecdsa.signatureS.buffer, size: ecdsa.signatureS.size)) else {
            throw SecureKeyError.malformed(what: "TPM signature (r or s longer than 32 bytes)")
        }
        return try ECDSASignature(rawRepresentation: r + s)
    }

    /// TPM2_ECDH_ZGen: the x coordinate of d·peer, computed inside the TPM. The peer point is
    /// already checked to be on the curve (P256PublicKey); the TPM checks again.
    func sharedSecret(with peer: P256PublicKey) throws -> Bytes {
        var point = TPM2B_ECC_POINT()
        point.point.x.size = TPM2Buffers.store(Array(peer.sec1[1...32]), into: &point.point.x.buffer)
        point.point.y.size = TPM2Buffers.store(Array(peer.sec1[33...64]), into: &point.point.y.buffer)
        var result: TPM2B_ECC_POINT = try device.withContext { esys throws(SecureKeyError) in
            var out: UnsafeMutablePointer<TPM2B_ECC_POINT>?
            let code = device.library.ecdhZGen(esys, device.identity, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE, &point, &out)
            let value = device.takeSecret(out)
            try device.check(code, "ECDH_ZGen (identity)")
            guard let value else { throw .operationFailed(operation: "TPM2 ECDH_ZGen", code: 0, detail: "no point returned") }
            return value
        }
        defer { TPM2Buffers.wipe(&result) }
        guard let x = TPM2Buffers.padded32(TPM2Buffers.load(result.point.x.buffer, size: result.point.x.size)) else {
            throw SecureKeyError.malformed(what: "TPM ECDH result (x longer than 32 bytes)")
        }
        return x
    }
}
