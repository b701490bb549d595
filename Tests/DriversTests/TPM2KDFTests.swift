// KDFa and KDFe against published known answers, not against this implementation:
// - KDFa: the TCG reference implementation's self-test vector for SHA-256 (KdfTestData.h in
//   the TPM 2.0 reference code, as shipped in libtpms src/tpm2/KdfTestData.h: key, label
//   "KDFSELFTESTLABEL", contextU, contextV, 160 bits out);
// - KDFe: vectors 35_SHA256_336 and 38_SHA256_496 of github.com/chrisfenner/tpm-test-vectors
//   (vectors/kdfe.json, generated with go-tpm and checked against a TPM simulator).
@testable import Drivers
import Protocol
import XCTest

final class TPM2KDFTests: XCTestCase {
    private func hex(_ text: String) -> Bytes { Bytes(hex: text)! }

    func testKDFaMatchesTheReferenceImplementationSelfTest() {
        let out = TPM2KDF.kdfa(key: hex("271FA08BBDC5060EC3DFA928FF9B73123A12DA0C"), label: "KDFSELFTESTLABEL",
                               contextU: hex("CE244F395DCA7391"), contextV: hex("DA504031DDF12E83"), bits: 160)
        XCTAssertEqual(out, hex("bb0259e1c8ba607e6a2cd704b69a902e9ade84c4"))
    }

    func testKDFaLongerThanOneBlockIsTheConcatenation() {
        // 512 bits is two HMAC blocks; the first 160 bits of a 160-bit and of a 512-bit run
        // differ, because the requested length is an input to every block.
        let key = hex("271FA08BBDC5060EC3DFA928FF9B73123A12DA0C")
        let long = TPM2KDF.kdfa(key: key, label: "KDFSELFTESTLABEL", contextU: [], contextV: [], bits: 512)
        XCTAssertEqual(long.count, 64)
        XCTAssertNotEqual(Bytes(long.prefix(20)), TPM2KDF.kdfa(key: key, label: "KDFSELFTESTLABEL", contextU: [], contextV: [], bits: 160))
    }

    func testKDFeMatchesPublishedVectors() {
        XCTAssertEqual(TPM2KDF.kdfe(z: hex("8995a6318a0217c7c7bf543f50da29016c4ff2a1ea5daf54ebcb00"), use: "INTEGRITY",
                                    partyU: hex("8852f14d8e9b68"), partyV: hex("74ff"), bits: 336),
                       hex("92343ef558feb95fd14838f9ca39c8618598a7eeb31af7fc276030b8c3ff326d4870f190e54abbec9da4"))
        XCTAssertEqual(TPM2KDF.kdfe(z: hex("00"), use: "OBFUSCATE",
                                    partyU: hex("ebcb3cd4a002941ed496ef1d32a70b0b7f6f05b8a51803d5a9ff9b"),
                                    partyV: hex("a1f79a7ee2beee21e2bfaee67769874687bfe21b2468fc8e721b6e967e12ff"), bits: 496),
                       hex("dcd14d72e0d5d8ec15b5ea15ae060e02f0e042f3af7efbd73650bb4457d73b060ef8f78bdf8cea099fe98fad6359bcfe92c1c6be8a157c1064c85ada3ad2"))
    }
}
