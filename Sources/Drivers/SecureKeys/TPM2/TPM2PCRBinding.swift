// Which PCRs (SHA-256 bank) the sealed storage key is bound to. An empty list means unbound:
// the key unseals on this TPM whatever booted. With a list, it unseals only while those PCRs
// hold the values they held when it was sealed (the same firmware, boot loader, kernel...).
import CTSS2

struct TPM2PCRBinding: Sendable, Equatable {
    let indexes: [Int]

    /// PCRs 0-23: the platform PCRs every TPM 2.0 has (TPM2_PCR_SELECT_MAX bytes cover them).
    init(_ indexes: [Int]) throws(SecureKeyError) {
        for index in indexes where !(0...23).contains(index) {
            throw .malformed(what: "tpm2 PCR index \(index) (the SHA-256 bank has PCRs 0-23)")
        }
        self.indexes = Array(Set(indexes)).sorted()
    }

    var isBound: Bool { !indexes.isEmpty }

    /// One TPMS_PCR_SELECTION for the SHA-256 bank, a bit per PCR.
    var selection: TPML_PCR_SELECTION {
        var list = TPML_PCR_SELECTION()
        list.count = 1
        list.pcrSelections.0.hash = TPM2_ALG_SHA256
        list.pcrSelections.0.sizeofSelect = 3
        var bits: [UInt8] = [0, 0, 0]
        for index in indexes { bits[index / 8] |= 1 << UInt8(index % 8) }
        _ = TPM2Buffers.store(bits, into: &list.pcrSelections.0.pcrSelect)
        return list
    }

    var description: String { "SHA-256 PCRs " + indexes.map(String.init).joined(separator: ",") }
}
