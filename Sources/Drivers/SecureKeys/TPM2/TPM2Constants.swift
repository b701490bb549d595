// TPM 2.0 constants whose tss2 header macros Swift cannot import (they are casts of sums, e.g.
// ((TPM2_RC)(TPM2_RC_FMT1 + 0x01F))). Values from TPM 2.0 Library Part 2 (Structures).
import CTSS2

enum TPM2Code {
    /// Format-one response codes (bit 7 set); the low six bits name the error.
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
    /// TPM2_SU_CLEAR: TPM2_Shutdown before a TPM Reset (the next TPM2_Startup(CLEAR)).
    static let shutdownClear: TPM2_SU = 0x0000

    /// The fixed properties' group: TPM2_PT_FIXED + 5 is the manufacturer ID.
    static let propertyManufacturer: UInt32 = 0x100 + 5
    /// TPM2_PT_VAR + 14: the dictionary-attack failure count (TPM2_PT_LOCKOUT_COUNTER).
    static let propertyLockoutCounter: UInt32 = 0x200 + 14
}

/// The layer byte of a TSS2_RC (bits 16-23): 0 is the TPM itself.
enum TPM2Layer {
    static func of(_ code: TSS2_RC) -> UInt32 { (code >> 16) & 0xFF }
    static let tpm: UInt32 = 0
    static let tcti: UInt32 = 10
    static let esys: UInt32 = 7
    static let mu: UInt32 = 9
    static let resourceManager: UInt32 = 11
    static let resourceManagerTPM: UInt32 = 12
}

extension TPM2Code {
    /// TPM_RC_AUTH_FAIL and TPM_RC_BAD_AUTH (format one; the session number is masked off).
    static let authFail: UInt32 = format1 + 0x00E
    static let badAuth: UInt32 = format1 + 0x022

    /// The error number of a format-one code from the TPM itself (parameter, handle or session
    /// number masked off), or nil for any other code.
    static func format1Error(_ code: UInt32) -> UInt32? {
        guard TPM2Layer.of(code) == TPM2Layer.tpm, code & format1 != 0 else { return nil }
        return code & 0xBF
    }
}

extension TPM2Code {
    /// TPM_RC_AUTH_TYPE (VER1 + 0x024): e.g. a password given where only a policy is allowed.
    static let authType: UInt32 = 0x124
}
