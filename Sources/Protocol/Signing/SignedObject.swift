// The one codec every signed object of the protocol goes through (docs/protocol.md 18.11):
//
//   encoding       body || signature (64, raw r || s)
//   signed input   label || context || body, ECDSA-SHA256
//
// The label is the object's own domain-separation string, so no signature can double as
// another object's; `context` is empty except for the two challenges the car signs over the
// phone's Hello or PairingHello as received. Each type keeps its own layout and field checks
// and gives this protocol its label and body; the signature's shape, the signed input, signing and
// verifying live in this file alone. (The PairingProof signs a transcript, not its own body, so
// it shares only the shape check.)

/// A signed object: its label, its canonical body and its raw r || s signature.
public protocol SignedObject: Sendable {
    /// The domain-separation label that starts every signed input of this kind.
    static var signatureLabel: Bytes { get }
    /// The signature's field name in format errors.
    static var signatureField: String { get }
    /// Every byte before the signature, canonically encoded.
    var body: Bytes { get }
    /// Raw r || s, `Wire.rawSignatureLength` bytes (checked when the object is made).
    var signature: Bytes { get }
}

/// A signed object that names its signer by key ID (the signer's or issuer's key ID field).
public protocol SignerNamedObject: SignedObject {
    var signerKeyID: KeyID { get }
}

/// Why a signed object does not verify with a key.
public enum SignedObjectError: Error, Equatable, Sendable {
    /// The key is not the one the object names as its signer.
    case wrongSigner
    /// The signature does not verify over label || context || body with the key.
    case badSignature
}

extension SignedObject {
    public static var signatureField: String { "signature" }

    public func encoded() -> Bytes { body + signature }

    /// The exact bytes the signer signs.
    public static func signedInput(context: Bytes, body: Bytes) -> Bytes { signatureLabel + context + body }

    /// The shape check every initialiser makes on its signature.
    static func checkSignature(_ signature: Bytes) throws(MessageFormatError) {
        try checkRawSignatureShape(signature, field: signatureField)
    }

    /// The trailing signature of an encoding being decoded.
    static func readSignature(_ reader: inout ByteReader) throws(MessageFormatError) -> Bytes {
        try reader.bytes(Wire.rawSignatureLength, signatureField)
    }

    /// Verifies the signature over label || `context` || body with `key`.
    public func verify(with key: P256PublicKey, context: Bytes) throws(SignedObjectError) {
        guard let parsed = try? ECDSASignature(rawRepresentation: signature),
              key.isValidSignature(parsed, for: Self.signedInput(context: context, body: body)) else { throw .badSignature }
    }

    /// Signs what `make` builds: `make` is called once with a placeholder signature, so the
    /// fields are checked before anything is signed, and once more with the real signature.
    /// A field `make` refuses is `.invalid`; a signer that fails is `.signingFailed`.
    public static func sign(by signer: any ProtocolSigner, context: Bytes,
                            _ make: (_ signature: Bytes) throws(MessageFormatError) -> Self) throws(KeyObjectError) -> Self {
        let unsigned: Self
        do throws(MessageFormatError) { unsigned = try make(Bytes(repeating: 0, count: Wire.rawSignatureLength)) } catch {
            throw .invalid(error)
        }
        let signature: ECDSASignature
        do { signature = try signer.signature(for: signedInput(context: context, body: unsigned.body)) } catch { throw .signingFailed }
        do throws(MessageFormatError) { return try make(signature.rawRepresentation) } catch { throw .invalid(error) }
    }
}

extension SignerNamedObject {
    /// label || body: these objects are signed over themselves alone.
    public var signatureInput: Bytes { Self.signedInput(context: [], body: body) }

    /// Verifies that `key` is the named signer and that its signature holds.
    public func verify(with key: P256PublicKey) throws(SignedObjectError) {
        guard KeyID(publicKey: key) == signerKeyID else { throw .wrongSigner }
        try verify(with: key, context: [])
    }

    /// Signs what `make` builds with the signer's key ID in it (see `sign(by:context:_:)`).
    public static func issue(by signer: any ProtocolSigner,
                             _ make: (_ signerKeyID: KeyID, _ signature: Bytes) throws(MessageFormatError) -> Self) throws(KeyObjectError) -> Self {
        let signerKeyID = KeyID(publicKey: signer.publicKey)
        return try sign(by: signer, context: []) { signature throws(MessageFormatError) in try make(signerKeyID, signature) }
    }
}

/// Raw r || s: exactly `Wire.rawSignatureLength` bytes.
func checkRawSignatureShape(_ signature: Bytes, field: String) throws(MessageFormatError) {
    guard signature.count == Wire.rawSignatureLength else {
        throw .invalidField(field: field, reason: "must be 64 bytes raw r || s")
    }
}
