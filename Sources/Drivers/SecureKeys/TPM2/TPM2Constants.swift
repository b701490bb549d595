// TPM 2.0 constants the vault sends or checks, from TCG TPM 2.0 Library Part 2 (Structures):
// algorithm IDs (§6.3), command codes (§6.5), response codes (§6.6), tags (§6.9), handles
// (§7.4), object attributes (§8.3), session attributes (§8.4), capabilities and properties
// (§6.12, §6.13).

enum TPM2Code {
    /// Format-one response codes (bit 7 set); the low six bits name the error (Part 2 §6.6.3).
    static let format1: UInt32 = 0x080
    static let value: UInt32 = format1 + 0x004
    static let hash: UInt32 = format1 + 0x003
    static let size: UInt32 = format1 + 0x015
    static let key: UInt32 = format1 + 0x01C
    static let policyFail: UInt32 = format1 + 0x01D
    static let integrity: UInt32 = format1 + 0x01F
    static let binding: UInt32 = format1 + 0x025
    /// Format-zero codes that a bad or foreign blob can produce as well.
    static let authUnavailable: UInt32 = 0x12F // TPM_RC_AUTH_UNAVAILABLE (VER1 + 0x02F)
    /// TPM_RC_SENSITIVE (VER1 + 0x055): the private blob did not decrypt to a valid sensitive area.
    static let sensitive: UInt32 = 0x155
    static let lockout: UInt32 = 0x921 // TPM_RC_LOCKOUT (warning)
    /// TPM_SU_CLEAR: TPM2_Shutdown before a TPM Reset (the next TPM2_Startup(CLEAR)).
    static let shutdownClear: UInt16 = 0x0000

    /// The fixed properties' group: TPM_PT_FIXED + 5 is the manufacturer ID.
    static let propertyManufacturer: UInt32 = 0x100 + 5
    /// TPM_PT_VAR + 14: the dictionary-attack failure count (TPM_PT_LOCKOUT_COUNTER).
    static let propertyLockoutCounter: UInt32 = 0x200 + 14
}

extension TPM2Code {
    /// TPM_RC_AUTH_FAIL and TPM_RC_BAD_AUTH (format one; the session number is masked off).
    static let authFail: UInt32 = format1 + 0x00E
    static let badAuth: UInt32 = format1 + 0x022

    /// The error number of a format-one code (parameter, handle or session number masked off,
    /// Part 2 §6.6.3: bits 8-11 say which, bit 6 whether a parameter), or nil for any other code.
    static func format1Error(_ code: UInt32) -> UInt32? {
        guard code & 0xFFFF_F000 == 0, code & format1 != 0 else { return nil }
        return code & 0xBF
    }

    /// TPM_RC_AUTH_TYPE (VER1 + 0x024): e.g. a password given where only a policy is allowed.
    static let authType: UInt32 = 0x124
}

/// Algorithm identifiers (Part 2 §6.3, TPM_ALG_ID).
enum TPM2Algorithm {
    static let aes: UInt16 = 0x0006
    static let keyedHash: UInt16 = 0x0008
    static let sha256: UInt16 = 0x000B
    static let null: UInt16 = 0x0010
    static let ecdsa: UInt16 = 0x0018
    static let ecc: UInt16 = 0x0023
    static let cfb: UInt16 = 0x0043
    /// TPM_ECC_NIST_P256 (Part 2 §6.4, TPM_ECC_CURVE).
    static let curveP256: UInt16 = 0x0003
}

/// Command codes (Part 2 §6.5.2, TPM_CC).
enum TPM2CommandCode {
    static let createPrimary: UInt32 = 0x0000_0131
    static let pcrExtend: UInt32 = 0x0000_0182
    static let shutdown: UInt32 = 0x0000_0145
    static let create: UInt32 = 0x0000_0153
    static let load: UInt32 = 0x0000_0157
    static let unseal: UInt32 = 0x0000_015E
    static let flushContext: UInt32 = 0x0000_0165
    static let startAuthSession: UInt32 = 0x0000_0176
    static let getCapability: UInt32 = 0x0000_017A
    static let policyPCR: UInt32 = 0x0000_017F
    static let policyGetDigest: UInt32 = 0x0000_0189
    static let ecdhZGen: UInt32 = 0x0000_0154
    static let sign: UInt32 = 0x0000_015D
}

/// Structure tags (Part 2 §6.9, TPM_ST).
enum TPM2Tag {
    static let noSessions: UInt16 = 0x8001
    static let sessions: UInt16 = 0x8002
    static let hashCheck: UInt16 = 0x8024
}

/// Permanent handles (Part 2 §7.4, TPM_RH / TPM_RS).
enum TPM2Handle {
    static let owner: UInt32 = 0x4000_0001
    static let null: UInt32 = 0x4000_0007
    /// TPM_RS_PW: the password "session" (Part 1 §19.8.4): the authValue in the clear, here empty.
    static let password: UInt32 = 0x4000_0009
    /// PCR n is handle n (Part 2 §7.2, TPM_HT_PCR = 0x00).
    static func pcr(_ index: Int) -> UInt32 { UInt32(index) }
}

/// Session types (Part 2 §6.14, TPM_SE).
enum TPM2SessionType {
    static let hmac: UInt8 = 0x00
    static let policy: UInt8 = 0x01
    static let trial: UInt8 = 0x03
}

/// TPMA_SESSION bits (Part 2 §8.4).
enum TPM2SessionAttribute {
    static let continueSession: UInt8 = 0x01
    static let decrypt: UInt8 = 0x20
    static let encrypt: UInt8 = 0x40
}

/// TPMA_OBJECT bits (Part 2 §8.3.2).
enum TPM2ObjectAttribute {
    static let fixedTPM: UInt32 = 1 << 1
    static let fixedParent: UInt32 = 1 << 4
    static let sensitiveDataOrigin: UInt32 = 1 << 5
    static let userWithAuth: UInt32 = 1 << 6
    static let noDA: UInt32 = 1 << 10
    static let restricted: UInt32 = 1 << 16
    static let decrypt: UInt32 = 1 << 17
    static let signEncrypt: UInt32 = 1 << 18
}

/// TPM_CAP_TPM_PROPERTIES (Part 2 §6.12).
enum TPM2Capability {
    static let tpmProperties: UInt32 = 0x0000_0006
}
