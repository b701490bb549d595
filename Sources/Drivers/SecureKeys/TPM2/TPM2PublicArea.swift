// TPMT_PUBLIC (Part 2 §12.2.4) for the two object types the vault uses: ECC keys and
// keyed-hash (sealed data) objects. Marshalled exactly as Part 2 lays it out, which is also
// what tpm2-tss's Tss2_MU_TPM2B_PUBLIC_Marshal writes, so blob files stay interchangeable.
import Protocol

struct TPM2PublicArea: Equatable, Sendable {
    /// TPMT_SYM_DEF_OBJECT (Part 2 §11.1.7): algorithm, then keyBits and mode unless NULL.
    struct Symmetric: Equatable, Sendable {
        var algorithm: UInt16 = TPM2Algorithm.null
        var keyBits: UInt16 = 0
        var mode: UInt16 = 0
    }

    var type: UInt16
    var nameAlg: UInt16 = TPM2Algorithm.sha256
    var attributes: UInt32
    var authPolicy: Bytes = []
    // TPMS_ECC_PARMS (Part 2 §12.2.3.6).
    var symmetric = Symmetric()
    /// TPMT_ECC_SCHEME / TPMT_KEYEDHASH_SCHEME: scheme, then its details unless NULL.
    var scheme: UInt16 = TPM2Algorithm.null
    var schemeDetails: Bytes = []
    var curve: UInt16 = 0
    var kdf: UInt16 = TPM2Algorithm.null
    var kdfHash: UInt16 = 0
    /// TPMU_PUBLIC_ID: for ECC the point's x and y (TPMS_ECC_POINT), for keyed-hash one digest in `x`.
    var x: Bytes = []
    var y: Bytes = []

    func marshal(_ writer: inout TPM2Writer) {
        writer.u16(type)
        writer.u16(nameAlg)
        writer.u32(attributes)
        writer.sized(authPolicy)
        if type == TPM2Algorithm.ecc {
            writer.u16(symmetric.algorithm)
            if symmetric.algorithm != TPM2Algorithm.null {
                writer.u16(symmetric.keyBits)
                writer.u16(symmetric.mode)
            }
            writer.u16(scheme)
            writer.raw(schemeDetails)
            writer.u16(curve)
            writer.u16(kdf)
            if kdf != TPM2Algorithm.null { writer.u16(kdfHash) }
            writer.sized(x)
            writer.sized(y)
        } else {
            writer.u16(scheme)
            writer.raw(schemeDetails)
            writer.sized(x)
        }
    }

    /// TPM2B_PUBLIC: the area behind a UINT16 size (Part 2 §12.2.5).
    var sizedBytes: Bytes {
        var writer = TPM2Writer()
        writer.sized { marshal(&$0) }
        return writer.bytes
    }

    /// The object's Name: nameAlg || SHA-256(TPMT_PUBLIC) (Part 1 §16, "Names").
    var name: Bytes {
        var writer = TPM2Writer()
        marshal(&writer)
        var name = TPM2Writer()
        name.u16(nameAlg)
        name.raw(SHA256.hash(writer.bytes))
        return name.bytes
    }

    /// Parses a TPMT_PUBLIC of an ECC or keyed-hash object; any other type is refused.
    static func parse(_ reader: inout TPM2Reader) throws(TPM2WireError) -> TPM2PublicArea {
        let type = try reader.u16()
        guard type == TPM2Algorithm.ecc || type == TPM2Algorithm.keyedHash else { throw .unexpected(what: "object type", value: UInt32(type)) }
        var area = TPM2PublicArea(type: type, nameAlg: try reader.u16(), attributes: try reader.u32())
        guard area.nameAlg == TPM2Algorithm.sha256 else { throw .unexpected(what: "nameAlg", value: UInt32(area.nameAlg)) }
        area.authPolicy = try reader.sized("authPolicy", limit: 64)
        if type == TPM2Algorithm.ecc {
            area.symmetric.algorithm = try reader.u16()
            if area.symmetric.algorithm != TPM2Algorithm.null {
                area.symmetric.keyBits = try reader.u16()
                area.symmetric.mode = try reader.u16()
            }
            area.scheme = try reader.u16()
            area.schemeDetails = try schemeDetails(area.scheme, &reader)
            area.curve = try reader.u16()
            area.kdf = try reader.u16()
            if area.kdf != TPM2Algorithm.null { area.kdfHash = try reader.u16() }
            area.x = try reader.sized("ECC x", limit: 128)
            area.y = try reader.sized("ECC y", limit: 128)
        } else {
            area.scheme = try reader.u16()
            area.schemeDetails = try schemeDetails(area.scheme, &reader)
            area.x = try reader.sized("keyed-hash unique", limit: 64)
        }
        return area
    }

    /// A TPM2B_PUBLIC that fills `bytes` exactly (a blob file, a response field).
    static func parseSized(_ bytes: Bytes) throws(TPM2WireError) -> TPM2PublicArea {
        var reader = TPM2Reader(bytes)
        let size = Int(try reader.u16())
        var inner = try reader.sub(size)
        try reader.finish()
        let area = try parse(&inner)
        try inner.finish()
        return area
    }

    /// The details after a scheme ID (Part 2 §11.2: a hash algorithm for the signing and
    /// key-exchange schemes and HMAC; ECDAA adds a count; XOR adds a KDF).
    private static func schemeDetails(_ scheme: UInt16, _ reader: inout TPM2Reader) throws(TPM2WireError) -> Bytes {
        switch scheme {
        case TPM2Algorithm.null: return []
        case 0x001A, 0x000A: return try reader.raw(4) // ECDAA: hashAlg + count; XOR: hashAlg + kdf
        default: return try reader.raw(2)
        }
    }
}
