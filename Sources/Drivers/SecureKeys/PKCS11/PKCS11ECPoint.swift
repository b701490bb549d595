// The two DER fragments a P-256 key needs on a token: CKA_EC_PARAMS (the named curve's OID) and
// CKA_EC_POINT (the point, which PKCS#11 v2.40 section 2.3.3 says is a DER OCTET STRING around
// the X9.62 encoding; some older modules return the bare point, which is accepted too).
import Protocol

enum PKCS11ECPoint {
    /// DER OBJECT IDENTIFIER 1.2.840.10045.3.1.7 (prime256v1 / secp256r1).
    static let p256Parameters: Bytes = [0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07]

    /// The 65-byte uncompressed point from a CKA_EC_POINT value, or nil when it is neither
    /// OCTET STRING(65 bytes) nor the bare 65-byte point.
    static func uncompressedPoint(fromAttribute value: Bytes) -> Bytes? {
        let length = P256PublicKey.sec1Length
        if value.count == length + 2, value[0] == 0x04, value[1] == UInt8(length) {
            return Array(value[2...])
        }
        if value.count == length, value[0] == 0x04 { return value }
        return nil
    }
}
