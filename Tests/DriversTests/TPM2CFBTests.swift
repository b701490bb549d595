// AES-128-CFB128 against NIST SP 800-38A, Appendix F.3.13/F.3.14 (CFB128-AES128.Encrypt and
// .Decrypt, first two blocks), and the first-parameter rule of TPM parameter encryption.
@testable import Drivers
import Protocol
import XCTest

final class TPM2CFBTests: XCTestCase {
    private let key = Bytes(hex: "2b7e151628aed2a6abf7158809cf4f3c")!
    private let iv = Bytes(hex: "000102030405060708090a0b0c0d0e0f")!
    private let plaintext = Bytes(hex: "6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e51")!
    private let ciphertext = Bytes(hex: "3b3fd92eb72dad20333449f8e83cfb4ac8a64537a0b3a93fcde3cdad9f1ce58b")!

    func testSP80038AVectors() {
        XCTAssertEqual(TPM2CFB.apply(plaintext, key: key, iv: iv, encrypt: true), ciphertext)
        XCTAssertEqual(TPM2CFB.apply(ciphertext, key: key, iv: iv, encrypt: false), plaintext)
        // CFB keeps lengths: a partial last block (the TPM encrypts any length).
        XCTAssertEqual(TPM2CFB.apply(Bytes(plaintext.prefix(20)), key: key, iv: iv, encrypt: true), Bytes(ciphertext.prefix(20)))
    }

    func testOnlyTheBufferOfTheFirstSizedParameterIsEncrypted() throws {
        let parameters: Bytes = [0x00, 0x20] + plaintext + [0xAA, 0xBB]
        let encrypted = try XCTUnwrap(TPM2SessionCrypto.cryptFirstParameter(parameters, key: key, iv: iv, encrypt: true))
        XCTAssertEqual(encrypted, [0x00, 0x20] + ciphertext + [0xAA, 0xBB], "size and later parameters stay in the clear")
        XCTAssertNil(TPM2SessionCrypto.cryptFirstParameter([0x00, 0x21] + plaintext, key: key, iv: iv, encrypt: true),
                     "a size longer than the area is refused, not read past")
        XCTAssertNil(TPM2SessionCrypto.cryptFirstParameter([0x00], key: key, iv: iv, encrypt: true))
    }
}
