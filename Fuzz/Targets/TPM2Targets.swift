// The TPM 2.0 client's parsers (Sources/Drivers/SecureKeys/TPM2) against arbitrary bytes: the
// responses a TPM (or anything on its bus or socket) returns, and the public-area blob files.
import Drivers
import Protocol

enum TPM2Targets {
    static let all: [FuzzTarget] = [
        FuzzTarget("tpm2-response", "TPM2CommandFrame.decode (byte 0 picks 0-1 handles and 0-2 sessions; the rest is the response): accepted => <= 4096 bytes, the response encoded again from what was parsed is the input (every byte accounted for), the input minus its last byte or plus one byte is refused") { input throws(PropertyViolation) in
            guard let selector = input.first else { return false }
            let response = Bytes(input.dropFirst())
            let handles = Int(selector & 1)
            let sessions = Int(selector >> 1 & 3) % 3
            guard let again = TPM2WireFuzzing.response(response, handleCount: handles, sessionCount: sessions) else { return false }
            try require(response.count <= 4096, "accepted \(response.count) bytes")
            try require(again == response, "re-encoded response differs from the input")
            try require(TPM2WireFuzzing.response(Bytes(response.dropLast()), handleCount: handles, sessionCount: sessions) == nil,
                        "truncated response accepted")
            try require(TPM2WireFuzzing.response(response + [0], handleCount: handles, sessionCount: sessions) == nil,
                        "response with a trailing byte accepted")
            return true
        },
        FuzzTarget("tpm2-public", "TPM2PublicArea.parseSized (a tpm2-*.pub blob file): accepted => marshalled again it is the input (canonical, nothing skipped), truncated or with a trailing byte refused") { input throws(PropertyViolation) in
            guard let again = TPM2WireFuzzing.publicArea(input) else { return false }
            try require(again == input, "re-marshalled public area differs from the input")
            try require(TPM2WireFuzzing.publicArea(Bytes(input.dropLast())) == nil, "truncated public area accepted")
            try require(TPM2WireFuzzing.publicArea(input + [0]) == nil, "public area with a trailing byte accepted")
            return true
        },
    ]
}
