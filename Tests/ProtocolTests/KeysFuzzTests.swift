// Seeded mutation fuzzing of every keys decoder, the certificate and revocation validators, and
// the car's pairing path: nothing crashes, and no mutated input enrolls, grants or revokes.
import XCTest
@testable import Protocol

final class KeysFuzzTests: XCTestCase {
    var corpus: [Bytes] {
        KeysKAT.expected.map { Bytes(testHex: $0.1) }
    }

    func testDecodersNeverCrash() throws {
        var random = SplitMix64(state: 0x4B45_5953)
        let corpus = self.corpus
        var accepted = 0
        for _ in 0..<20_000 {
            let input = random.mutate(corpus[random.below(corpus.count)], corpus: corpus)
            if (try? ShareCertificate.decode(input)) != nil { accepted += 1 }
            _ = try? Revocation.decode(input)
            _ = try? KeyRecord(storedBytes: input)
            _ = try? KeyActivity(storedBytes: input)
            _ = try? RevocationEntry(storedBytes: input)
            _ = try? Message.decode(input)
            _ = MessageDecoder.describe(input)
        }
        XCTAssertGreaterThan(accepted, 0, "the fuzzer reaches past the first checks")
    }

    func testValidatorsOnlyAcceptTheGenuineObjects() throws {
        let keychain = Keychain(records: [KeyRecord(publicKey: KeysKAT.owner.publicKey, role: .owner, permissions: .all)])
        let now = ProtocolTime(monotonicMillis: 1, wallSeconds: Int64(KeysKAT.issuedAt), wallClockTrusted: true)
        let certificate = Bytes(testHex: KeysKAT.expected.first { $0.0 == "share certificate" }!.1)
        let revocation = Bytes(testHex: KeysKAT.expected.first { $0.0 == "revocation" }!.1)
        let holder = KeyID(publicKey: KeysKAT.holder.publicKey)
        var random = SplitMix64(state: 0x5345_5246)
        for _ in 0..<2_000 {
            let mutatedCertificate = random.mutate(certificate, corpus: [certificate, revocation])
            if let record = try? ShareCertificateValidator.verify(mutatedCertificate, keyID: holder, vehicleID: KeysKAT.vehicleID,
                                                                  now: now, keychain: keychain) {
                XCTFail("a mutated certificate verified: \(mutatedCertificate.hexString) -> \(record)")
            }
            let mutatedRevocation = random.mutate(revocation, corpus: [certificate, revocation])
            if (try? RevocationValidator.verify(mutatedRevocation, vehicleID: KeysKAT.vehicleID, keys: keychain)) != nil {
                XCTFail("a mutated revocation verified: \(mutatedRevocation.hexString)")
            }
        }
    }

    func testTheCarNeverEnrollsForMutatedPairingInput() throws {
        var random = SplitMix64(state: 0x5041_4952)
        var rig = KeysRig(owners: [], configure: {
            $0.rateLimit = RateLimitPolicy(failureThreshold: 1_000_000)
            $0.handshakeBudgetPerPeer = HandshakeBudget(perSecond: 1_000_000, burst: 1_000_000)
            $0.handshakeBudgetCarWide = HandshakeBudget(perSecond: 1_000_000, burst: 1_000_000)
            $0.pairing = PairingPolicy(maxWrongCodes: 1_000_000)
        })
        let (code, _) = try rig.car.openPairingWindow(now: rig.now)
        // A genuine exchange to mutate, with the genuine proof never delivered.
        var phone = PhonePairingSession(longTermKey: KeysFixtures.owner, code: code)
        let hello = try phone.start()
        let link = LinkID(1)
        let challenge = try XCTUnwrap(rig.car.receive(hello, from: link, now: rig.now).sent.first)
        guard case .send(let proof) = try phone.receive(challenge) else { return XCTFail() }
        let corpus = [hello, challenge, proof]
        for iteration in 0..<3_000 {
            let mutated = random.mutate(corpus[random.below(corpus.count)], corpus: corpus)
            // Keep a fresh challenge on the link so mutated proofs reach the MAC check.
            let refresh = rig.car.receive(hello, from: link, now: rig.now)
            let actions = rig.car.receive(mutated, from: link, now: rig.now) + refresh
            XCTAssertTrue(actions.enrollments.isEmpty, "iteration \(iteration): \(mutated.hexString)")
            rig.now = rig.now.advanced(byMillis: 1)
        }
        XCTAssertEqual(rig.keychain.snapshot.ownerCount, 0)
        XCTAssertTrue(rig.car.isPairingWindowOpen(now: rig.now), "within 60 s")
    }
}
