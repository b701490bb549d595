// Cheap shape check for public keys inside messages; the curve check happens when the engine
// imports the point (P256PublicKey rejects off-curve points).

func checkSEC1Shape(_ bytes: Bytes, field: String) throws(MessageFormatError) {
    guard bytes.count == Wire.publicKeyLength, bytes.first == 0x04 else {
        throw .invalidField(field: field, reason: "must be a 65-byte SEC1 uncompressed point (04 || X || Y)")
    }
}
