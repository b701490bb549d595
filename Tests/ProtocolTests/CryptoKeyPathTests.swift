// The per-handshake key paths (SEC1 import on a shared parameters template, generation without
// the pairwise check, ECDH without re-validating the peer) agree with the slow, general paths
// and refuse what those refuse.
import Dispatch
import Synchronization
import XCTest
@testable import Protocol

final class CryptoKeyPathTests: XCTestCase {
    let generator = Bytes(testHex: "04"
        + "6b17d1f2e12c4247f8bce6e563a440f277037d812deb33a0f4a13945d898c296"
        + "4fe342e2fe1a7f9b8ee7eb4a7c0f9e162bce33576b315ececbb6406837bf51f5")
    let fieldPrime = Bytes(testHex: "ffffffff00000001000000000000000000000000ffffffffffffffffffffffff")

    func testSEC1ImportMatchesTheSPKIImport() throws {
        let fast = try P256PublicKey(sec1: generator)
        let general = try P256PublicKey(spkiDER: p256SPKIPrefix + generator)
        XCTAssertEqual(fast.sec1, generator)
        XCTAssertEqual(fast, general)
        XCTAssertEqual(try P256PrivateKey(rawScalar: Bytes(repeating: 0, count: 31) + [1]).publicKey.sec1, generator)
        let key = try P256PrivateKey.generate()
        XCTAssertEqual(try key.sharedSecret(with: fast), try key.sharedSecret(with: general))
        let signature = try key.signature(for: [1, 2, 3])
        XCTAssertTrue(try P256PublicKey(sec1: key.publicKey.sec1).isValidSignature(signature, for: [1, 2, 3]))
        XCTAssertEqual(try P256PublicKey(sec1: key.publicKey.sec1).pemRepresentation(), try key.publicKey.pemRepresentation())
    }

    func testSEC1ImportRefusesWhatIsNotAPoint() {
        var offCurve = generator
        offCurve[64] ^= 1
        let refused: [(String, Bytes)] = [
            ("off the curve", offCurve),
            ("x = p (not a field element)", [0x04] + fieldPrime + Array(generator[33...])),
            ("y = p", [0x04] + Array(generator[1...32]) + fieldPrime),
            ("all zero", [0x04] + Bytes(repeating: 0, count: 64)),
            ("compressed", [0x02] + Array(generator[1...32]) + Bytes(repeating: 0, count: 32)),
            ("short", Array(generator.prefix(64))),
        ]
        for (what, bytes) in refused {
            XCTAssertThrowsError(try P256PublicKey(sec1: bytes), what) { error in
                guard case CryptoError.invalidPublicKey = error else { return XCTFail("\(what): \(error)") }
            }
        }
    }

    func testGeneratedKeysAreConsistentPairs() throws {
        for _ in 0..<8 {
            let key = try P256PrivateKey.generate()
            // The slow path (PKCS#8 import with the pairwise check) accepts it and agrees.
            let reimported = try P256PrivateKey(pkcs8DER: key.pkcs8DER())
            XCTAssertEqual(reimported.publicKey, key.publicKey)
            let peer = try P256PrivateKey.generate()
            XCTAssertEqual(try key.sharedSecret(with: peer.publicKey), try peer.sharedSecret(with: key.publicKey))
            XCTAssertTrue(key.publicKey.isValidSignature(try key.signature(for: [9]), for: [9]))
        }
    }

    func testSharedTemplateIsSafeAcrossThreads() {
        let failures = Atomic<Int>(0)
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            for _ in 0..<50 {
                guard let key = try? P256PrivateKey.generate(), let copy = try? P256PublicKey(sec1: key.publicKey.sec1),
                      let peer = try? P256PrivateKey.generate(),
                      let a = try? key.sharedSecret(with: peer.publicKey), let b = try? peer.sharedSecret(with: copy),
                      a == b else {
                    failures.add(1, ordering: .relaxed)
                    continue
                }
            }
        }
        XCTAssertEqual(failures.load(ordering: .relaxed), 0)
    }
}
