// The public templates of the three objects the vault makes. The primary's template is fixed,
// so TPM2_CreatePrimary derives the same key from the owner seed at every open: nothing about
// it needs storing, and a different TPM (or a cleared one) derives a different primary, under
// which this board's blobs no longer load.
import CTSS2
import Protocol

enum TPM2Templates {
    /// The storage primary: ECC P-256, restricted decrypt (a parent), AES-128-CFB for its
    /// children's sensitive areas, under the owner hierarchy with empty auth. noDA: a parent
    /// that anyone on the board may use must not count towards dictionary-attack lockout.
    static func primary() -> TPM2B_PUBLIC {
        var template = TPM2B_PUBLIC()
        template.publicArea.type = TPM2_ALG_ECC
        template.publicArea.nameAlg = TPM2_ALG_SHA256
        template.publicArea.objectAttributes = TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT
            | TPMA_OBJECT_SENSITIVEDATAORIGIN | TPMA_OBJECT_USERWITHAUTH | TPMA_OBJECT_NODA
            | TPMA_OBJECT_RESTRICTED | TPMA_OBJECT_DECRYPT
        template.publicArea.parameters.eccDetail.symmetric.algorithm = TPM2_ALG_AES
        template.publicArea.parameters.eccDetail.symmetric.keyBits.aes = 128
        template.publicArea.parameters.eccDetail.symmetric.mode.aes = TPM2_ALG_CFB
        template.publicArea.parameters.eccDetail.scheme.scheme = TPM2_ALG_NULL
        template.publicArea.parameters.eccDetail.curveID = TPM2_ECC_NIST_P256
        template.publicArea.parameters.eccDetail.kdf.scheme = TPM2_ALG_NULL
        return template
    }

    /// The car identity: generated inside the TPM (sensitiveDataOrigin) and never leaving it
    /// (fixedTPM, fixedParent). Unrestricted with scheme NULL, so one key both signs
    /// (ECDSA-SHA256, scheme given per call) and does ECDH_ZGen.
    /// noDA: its auth value is empty, so dictionary-attack protection guards nothing, but
    /// without noDA every use marks the TPM "DA used", and each power cut while the agent runs
    /// then counts as a failed authorisation at the next TPM2_Startup: a few cuts lock the
    /// car out (swtpm: 3 tries, 1000 s recovery).
    static let identityAttributes: TPMA_OBJECT = TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT
        | TPMA_OBJECT_SENSITIVEDATAORIGIN | TPMA_OBJECT_USERWITHAUTH | TPMA_OBJECT_SIGN_ENCRYPT | TPMA_OBJECT_DECRYPT
        | TPMA_OBJECT_NODA

    /// `daProtected`: the template without noDA, as carkey-agent made objects before it set
    /// noDA (tests make such objects to check what older cars meet).
    static func identity(daProtected: Bool = false) -> TPM2B_PUBLIC {
        var template = TPM2B_PUBLIC()
        template.publicArea.type = TPM2_ALG_ECC
        template.publicArea.nameAlg = TPM2_ALG_SHA256
        template.publicArea.objectAttributes = daProtected ? identityAttributes & ~TPMA_OBJECT_NODA : identityAttributes
        template.publicArea.parameters.eccDetail.symmetric.algorithm = TPM2_ALG_NULL
        template.publicArea.parameters.eccDetail.scheme.scheme = TPM2_ALG_NULL
        template.publicArea.parameters.eccDetail.curveID = TPM2_ECC_NIST_P256
        template.publicArea.parameters.eccDetail.kdf.scheme = TPM2_ALG_NULL
        return template
    }

    /// The sealed storage key: a keyedhash data object holding caller-supplied bytes. Without a
    /// PCR policy it opens with (empty) auth; with one, userWithAuth is clear so only a policy
    /// session that passed PolicyPCR for the same values can unseal it. noDA for the reason the
    /// identity has it: the empty auth value or the PCR policy is the whole protection.
    static func sealedData(policy: Bytes?, daProtected: Bool = false) -> TPM2B_PUBLIC {
        var template = TPM2B_PUBLIC()
        template.publicArea.type = TPM2_ALG_KEYEDHASH
        template.publicArea.nameAlg = TPM2_ALG_SHA256
        var attributes: TPMA_OBJECT = TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT
        if !daProtected { attributes |= TPMA_OBJECT_NODA }
        if let policy {
            template.publicArea.authPolicy.size = TPM2Buffers.store(policy, into: &template.publicArea.authPolicy.buffer)
        } else {
            attributes |= TPMA_OBJECT_USERWITHAUTH
        }
        template.publicArea.objectAttributes = attributes
        template.publicArea.parameters.keyedHashDetail.scheme.scheme = TPM2_ALG_NULL
        return template
    }

    /// Whether a loaded identity is what this vault makes (a P-256 key with the attributes
    /// above, with or without noDA: cars set up before noDA keep their identity). The TPM
    /// vouches for the blob's integrity, not for who chose its template.
    static func isIdentity(_ area: TPMT_PUBLIC) -> Bool {
        area.type == TPM2_ALG_ECC && area.nameAlg == TPM2_ALG_SHA256
            && area.objectAttributes | TPMA_OBJECT_NODA == identityAttributes
            && area.parameters.eccDetail.curveID == TPM2_ECC_NIST_P256
    }

    /// Whether an object counts towards dictionary-attack lockout (made without noDA).
    static func isDAProtected(_ area: TPMT_PUBLIC) -> Bool {
        area.objectAttributes & TPMA_OBJECT_NODA == 0
    }

    /// Whether a loaded storage-key object is a fixedTPM sealed data object.
    static func isSealedData(_ area: TPMT_PUBLIC) -> Bool {
        area.type == TPM2_ALG_KEYEDHASH
            && area.objectAttributes & (TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT) == (TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT)
            && area.objectAttributes & (TPMA_OBJECT_SIGN_ENCRYPT | TPMA_OBJECT_DECRYPT) == 0
    }
}
