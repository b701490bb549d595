// The public templates of the three objects the vault makes. The primary's template is fixed,
// so TPM2_CreatePrimary derives the same key from the owner seed at every open: nothing about
// it needs storing, and a different TPM (or a cleared one) derives a different primary, under
// which this board's blobs no longer load.
import Protocol

enum TPM2Templates {
    private typealias A = TPM2ObjectAttribute

    /// The storage primary: ECC P-256, restricted decrypt (a parent), AES-128-CFB for its
    /// children's sensitive areas, under the owner hierarchy with empty auth. noDA: a parent
    /// that anyone on the board may use must not count towards dictionary-attack lockout.
    /// Byte for byte the template earlier versions sent through tpm2-tss: a different one would
    /// derive a different primary, under which existing cars' blobs no longer load.
    static func primary() -> TPM2PublicArea {
        var template = TPM2PublicArea(type: TPM2Algorithm.ecc,
                                      attributes: A.fixedTPM | A.fixedParent | A.sensitiveDataOrigin | A.userWithAuth | A.noDA
                                          | A.restricted | A.decrypt)
        template.symmetric = .init(algorithm: TPM2Algorithm.aes, keyBits: 128, mode: TPM2Algorithm.cfb)
        template.curve = TPM2Algorithm.curveP256
        return template
    }

    /// The car identity: generated inside the TPM (sensitiveDataOrigin) and never leaving it
    /// (fixedTPM, fixedParent). Unrestricted with scheme NULL, so one key both signs
    /// (ECDSA-SHA256, scheme given per call) and does ECDH_ZGen.
    /// noDA: its auth value is empty, so dictionary-attack protection guards nothing, but
    /// without noDA every use marks the TPM "DA used", and each power cut while the agent runs
    /// then counts as a failed authorisation at the next TPM2_Startup: a few cuts lock the
    /// car out (swtpm: 3 tries, 1000 s recovery).
    static let identityAttributes: UInt32 = A.fixedTPM | A.fixedParent | A.sensitiveDataOrigin | A.userWithAuth | A.signEncrypt
        | A.decrypt | A.noDA

    /// `daProtected`: the template without noDA, as carkey-agent made objects before it set
    /// noDA (tests make such objects to check what older cars meet).
    static func identity(daProtected: Bool = false) -> TPM2PublicArea {
        var template = TPM2PublicArea(type: TPM2Algorithm.ecc,
                                      attributes: daProtected ? identityAttributes & ~A.noDA : identityAttributes)
        template.curve = TPM2Algorithm.curveP256
        return template
    }

    /// The sealed storage key: a keyedhash data object holding caller-supplied bytes. Without a
    /// PCR policy it opens with (empty) auth; with one, userWithAuth is clear so only a policy
    /// session that passed PolicyPCR for the same values can unseal it. noDA for the reason the
    /// identity has it: the empty auth value or the PCR policy is the whole protection.
    static func sealedData(policy: Bytes?, daProtected: Bool = false) -> TPM2PublicArea {
        var attributes: UInt32 = A.fixedTPM | A.fixedParent
        if !daProtected { attributes |= A.noDA }
        if policy == nil { attributes |= A.userWithAuth }
        var template = TPM2PublicArea(type: TPM2Algorithm.keyedHash, attributes: attributes)
        template.authPolicy = policy ?? []
        return template
    }

    /// Whether a loaded identity is what this vault makes (a P-256 key with the attributes
    /// above, with or without noDA: cars set up before noDA keep their identity). The TPM
    /// vouches for the blob's integrity, not for who chose its template.
    static func isIdentity(_ area: TPM2PublicArea) -> Bool {
        area.type == TPM2Algorithm.ecc && area.nameAlg == TPM2Algorithm.sha256
            && area.attributes | A.noDA == identityAttributes
            && area.curve == TPM2Algorithm.curveP256
    }

    /// Whether an object counts towards dictionary-attack lockout (made without noDA).
    static func isDAProtected(_ area: TPM2PublicArea) -> Bool {
        area.attributes & A.noDA == 0
    }

    /// Whether a loaded storage-key object is a fixedTPM sealed data object.
    static func isSealedData(_ area: TPM2PublicArea) -> Bool {
        area.type == TPM2Algorithm.keyedHash
            && area.attributes & (A.fixedTPM | A.fixedParent) == (A.fixedTPM | A.fixedParent)
            && area.attributes & (A.signEncrypt | A.decrypt) == 0
    }
}
