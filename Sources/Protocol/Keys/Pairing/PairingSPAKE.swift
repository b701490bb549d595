// How pairing uses SPAKE2+ (docs/protocol.md section 18.6): the code is the password, the phone
// is the prover, the car the verifier; identities and Context bind the exchange to this phone
// key, this car identity key, this vehicle and this pairing window.
import COpenSSL

public enum PairingSPAKE {
    /// PBKDF2-HMAC-SHA256 parameters turning the code into w0s || w1s (80 bytes).
    public static let pbkdfSalt: Bytes = Array("OCK1-PAIR-SPAKE2P-W".utf8)
    public static let pbkdfIterations = 4096
    /// Context = label || vehicleIDLen (1) || vehicleID || windowID (16).
    public static let contextLabel: Bytes = Array("OCK1-PAIR-SPAKE2P-V2".utf8)
    /// The phone key's possession signature.
    public static let possessionLabel: Bytes = Array("OCK1-PAIR-PROOF".utf8)
    /// The MAC of a successful PairingResult.
    public static let resultLabel: Bytes = Array("OCK1-PAIR-CAR".utf8)

    /// w0 and w1 for `code`. The salt is fixed because the phone must compute shareP before it
    /// hears from the car; the code itself is fresh per window. With 10^6 codes no PBKDF slows
    /// a search much: what bounds an attacker is one online guess per attempt (five per window).
    public static func scalars(code: PairingCode) throws(CryptoError) -> (w0: Bytes, w1: Bytes) {
        var output = Bytes(repeating: 0, count: 2 * SPAKE2Plus.pbkdfHalfLength)
        defer { ConstantTime.wipe(&output) }
        let ok = code.digits.withUnsafeBufferPointer { password in
            pbkdfSalt.withUnsafeBufferPointer { salt in
                password.withMemoryRebound(to: CChar.self) { chars in
                    PKCS5_PBKDF2_HMAC(chars.baseAddress, Int32(chars.count), salt.baseAddress, Int32(salt.count),
                                      Int32(pbkdfIterations), EVP_sha256(), Int32(output.count), &output)
                }
            }
        }
        guard ok == 1 else { throw OpenSSL.failure("PKCS5_PBKDF2_HMAC") }
        return try SPAKE2Plus.scalars(fromPBKDFOutput: output)
    }

    /// idProver = phone key (65), idVerifier = car identity key (65), Context as above.
    public static func identities(phone: Bytes, car: Bytes, vehicleID: VehicleID, windowID: Bytes) -> SPAKE2Plus.Identities {
        SPAKE2Plus.Identities(context: contextLabel + [UInt8(vehicleID.bytes.count)] + vehicleID.bytes + windowID,
                              idProver: phone, idVerifier: car)
    }

    /// What the phone key signs: "OCK1-PAIR-PROOF" || PairingHello || PairingChallenge || confirmP.
    /// confirmP binds the signature to this SPAKE2+ transcript.
    public static func possessionInput(pairingHello: Bytes, pairingChallenge: Bytes, confirmP: Bytes) -> Bytes {
        possessionLabel + pairingHello + pairingChallenge + confirmP
    }

    /// HMAC-SHA256(K_shared, "OCK1-PAIR-CAR" || carPub || phonePub || challenge).
    public static func resultMAC(kShared: Bytes, phone: Bytes, car: Bytes, challenge: Bytes) -> Bytes {
        HMACSHA256.authenticationCode(key: kShared, message: resultLabel + car + phone + challenge)
    }
}
