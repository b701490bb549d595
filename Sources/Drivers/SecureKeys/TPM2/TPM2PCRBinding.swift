// Which PCRs (SHA-256 bank) the sealed storage key is bound to. An empty list means unbound:
// the key unseals on this TPM whatever booted. With a list, it unseals only while those PCRs
// hold the values they held when it was sealed (the same firmware, boot loader, kernel...).

import Protocol

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

    /// A TPML_PCR_SELECTION (Part 2 §10.9.7) with one TPMS_PCR_SELECTION for the SHA-256 bank:
    /// count, hash, sizeofSelect (3 bytes cover PCRs 0-23), a bit per PCR (PCR n is bit n % 8
    /// of byte n / 8, Part 2 §10.6.1).
    var selection: Bytes {
        var bits: [UInt8] = [0, 0, 0]
        for index in indexes { bits[index / 8] |= 1 << UInt8(index % 8) }
        var writer = TPM2Writer()
        writer.u32(1)
        writer.u16(TPM2Algorithm.sha256)
        writer.u8(3)
        writer.raw(bits)
        return writer.bytes
    }

    var description: String { "SHA-256 PCRs " + indexes.map(String.init).joined(separator: ",") }
}
