// Service-mode authorisation (docs/protocol.md 18.13): the known-answer example byte for byte,
// strict decoding, and each of the gate's checks with its fault, in the documented order.
import XCTest
@testable import Protocol

final class ServiceChallengeTests: XCTestCase {
    /// The example in docs/protocol.md 18.13 (the same signer key as the remote-command example).
    static let scalar = RemoteCommandTests.scalar
    static let nonce = Bytes(0..<16)
    static let vehicle = try! VehicleID("OCK-SIM-0001")
    static let issuedAt: UInt32 = 1_760_000_000
    static let challengeHex = "4801000102030405060708090a0b0c0d0e0f0c4f434b2d53494d2d3030303168e7780068e7792c"
    static let signatureHex = "5194680ecc28a1ee4187ea6a07a33ebc38b620e67642e93293f4c75ac58e0b4057e3242ab2a00153f909ca637fb602020d738d88943b4900ca778713b4cd034a"
    static let answerPrefixHex = "4901" + challengeHex + "b18b86ce1389e46d"

    private let owner = try! P256PrivateKey(rawScalar: Bytes(hex: ServiceChallengeTests.scalar)!)
    private var ownerID: KeyID { KeyID(publicKey: owner.publicKey) }

    private func directory(_ kind: RemoteSigner.Kind = .owner, permissions: Permissions = .all,
                           key: P256PrivateKey? = nil) -> RemoteCommandTests.Directory {
        let key = key ?? owner
        let signer = RemoteSigner(keyID: KeyID(publicKey: key.publicKey), publicKey: key.publicKey, kind: kind, permissions: permissions)
        return RemoteCommandTests.Directory(signers: [signer.keyID: signer])
    }

    private func gate(issuingAt now: UInt64 = 1_000) throws -> (ServiceChallengeGate, ServiceChallenge) {
        var gate = ServiceChallengeGate(vehicleID: Self.vehicle)
        let challenge = try gate.issue(nonce: Self.nonce, wallSeconds: Self.issuedAt, nowMillis: now)
        return (gate, challenge)
    }

    private func fault(_ body: () throws(FaultCode) -> ServiceAuthorised) -> FaultCode? {
        do throws(FaultCode) { _ = try body(); return nil } catch { return error }
    }

    func testKnownAnswerChallengeAndAnswer() throws {
        let (_, challenge) = try gate()
        XCTAssertEqual(challenge.encoded().hexString, Self.challengeHex)
        XCTAssertEqual(challenge.expiresAt - challenge.issuedAt, 300)
        XCTAssertEqual(try ServiceChallenge.decode(Bytes(hex: Self.challengeHex)!), challenge)

        let answerBytes = Bytes(hex: Self.answerPrefixHex + Self.signatureHex)!
        let answer = try ServiceAuthorisation.decode(answerBytes)
        XCTAssertEqual(answer.challenge, challenge)
        XCTAssertEqual(answer.signerKeyID, ownerID)
        XCTAssertEqual(answer.encoded(), answerBytes, "canonical")
        XCTAssertEqual(answer.signatureInput, Array("OCK1-SERVICE-AUTH".utf8) + Bytes(hex: Self.answerPrefixHex)!)
        let signature = try ECDSASignature(rawRepresentation: answer.signature)
        XCTAssertTrue(owner.publicKey.isValidSignature(signature, for: answer.signatureInput), "the documented signature verifies")

        // And the gate accepts the documented answer to the documented challenge.
        var (gate, _) = try gate()
        let accepted = try gate.authorise(answerBytes, nowMillis: 2_000, signers: directory(), isRevoked: { _ in false })
        XCTAssertEqual(accepted.signer.keyID, ownerID)
    }

    func testTheDocumentShowsTheseBytes() throws {
        let doc = try XCTUnwrap(readRepositoryFile("docs/protocol.md"), "docs/protocol.md missing")
        let blocks = DocumentHexBlocks.blocks(in: doc)
        XCTAssertTrue(blocks.contains(Self.challengeHex), "18.13 shows the challenge")
        XCTAssertTrue(blocks.contains(Self.answerPrefixHex + Self.signatureHex), "18.13 shows the answer")
        XCTAssertTrue(doc.contains("`c9afa9d845ba75166b5c215767b1d6934e50c3db36e89b127b8a622b120f6721`"))
    }

    func testSignedAnswersRoundTripAndAreFresh() throws {
        let (_, challenge) = try gate()
        let one = try ServiceAuthorisation.sign(challenge, by: owner)
        let two = try ServiceAuthorisation.sign(challenge, by: owner)
        XCTAssertEqual(try ServiceAuthorisation.decode(one.encoded()), one)
        XCTAssertEqual(one.encoded().count, 74 + challenge.encoded().count)
        XCTAssertNotEqual(one.signature, two.signature, "ECDSA with a fresh k")
    }

    func testStrictDecoding() throws {
        let challenge = Bytes(hex: Self.challengeHex)!
        XCTAssertThrowsError(try ServiceChallenge.decode(challenge + [0]), "trailing byte")
        XCTAssertThrowsError(try ServiceChallenge.decode(Array(challenge.dropLast())), "truncated")
        XCTAssertThrowsError(try ServiceChallenge.decode([]), "empty")
        var wrongType = challenge; wrongType[0] = 0x40
        XCTAssertThrowsError(try ServiceChallenge.decode(wrongType))
        var version = challenge; version[1] = 2
        XCTAssertEqual(Self.formatError { () throws(MessageFormatError) in try ServiceChallenge.decode(version) }, .unsupportedVersion(2))
        var zeroLength = challenge; zeroLength[18] = 0
        XCTAssertThrowsError(try ServiceChallenge.decode(zeroLength), "an empty vehicle ID")
        // expiresAt not after issuedAt, or more than 600 s after it.
        var backwards = challenge; backwards.replaceSubrange(35..<39, with: [0x68, 0xe7, 0x78, 0x00])
        XCTAssertThrowsError(try ServiceChallenge.decode(backwards))
        var tooLong = challenge; tooLong.replaceSubrange(35..<39, with: [0x68, 0xe7, 0x7a, 0x59])
        XCTAssertThrowsError(try ServiceChallenge.decode(tooLong), "601 s")
        XCTAssertThrowsError(try ServiceChallenge(nonce: [1, 2, 3], vehicleID: Self.vehicle, issuedAt: 1, expiresAt: 2))

        let answer = try ServiceAuthorisation.sign(try ServiceChallenge.decode(challenge), by: owner).encoded()
        XCTAssertThrowsError(try ServiceAuthorisation.decode(answer + [0]), "trailing byte")
        XCTAssertThrowsError(try ServiceAuthorisation.decode(Array(answer.dropLast())), "truncated signature")
        XCTAssertThrowsError(try ServiceAuthorisation.decode(Array(repeating: 0x49, count: ServiceAuthorisation.maxLength + 1)), "oversized")
    }

    private static func formatError(_ body: () throws(MessageFormatError) -> ServiceChallenge) -> MessageFormatError? {
        do throws(MessageFormatError) { _ = try body(); return nil } catch { return error }
    }

    func testEachRefusalInOrder() throws {
        var (gate, challenge) = try gate()
        let signers = directory()
        let good = try ServiceAuthorisation.sign(challenge, by: owner).encoded()
        func check(_ bytes: Bytes, at now: UInt64 = 2_000, _ directory: RemoteCommandTests.Directory? = nil,
                   revoked: Set<KeyID> = []) -> FaultCode? {
            fault { () throws(FaultCode) in
                try gate.authorise(bytes, nowMillis: now, signers: directory ?? signers, isRevoked: { revoked.contains($0) })
            }
        }
        XCTAssertEqual(check([0x49, 0x01, 0x48]), .malformedMessage)
        var version = good; version[1] = 9
        XCTAssertEqual(check(version), .unsupportedVersion)

        let otherCar = try ServiceChallenge(nonce: Self.nonce, vehicleID: try VehicleID("OCK-SIM-0002"),
                                            issuedAt: Self.issuedAt, expiresAt: Self.issuedAt + 300)
        XCTAssertEqual(check(try ServiceAuthorisation.sign(otherCar, by: owner).encoded()), .wrongVehicle)
        let stranger = try ServiceChallenge(nonce: Bytes(repeating: 7, count: 16), vehicleID: Self.vehicle,
                                            issuedAt: Self.issuedAt, expiresAt: Self.issuedAt + 300)
        XCTAssertEqual(check(try ServiceAuthorisation.sign(stranger, by: owner).encoded()), .unknownChallenge)
        let stretched = try ServiceChallenge(nonce: Self.nonce, vehicleID: Self.vehicle, issuedAt: Self.issuedAt,
                                             expiresAt: Self.issuedAt + 600)
        XCTAssertEqual(check(try ServiceAuthorisation.sign(stretched, by: owner).encoded()), .unknownChallenge,
                       "the car's challenge byte for byte: a longer expiry is another challenge")
        XCTAssertNotNil(gate.pending(nowMillis: 2_000), "refusals before the challenge matched do not use it up")

        XCTAssertNil(check(good), "accepted")
        XCTAssertEqual(check(good), .reusedChallenge, "a replay of the accepted answer")
        XCTAssertNil(gate.pending(nowMillis: 2_000))

        // Expired: on the car's monotonic clock, at the deadline.
        let late = try gate.issue(nonce: Bytes(repeating: 1, count: 16), wallSeconds: Self.issuedAt, nowMillis: 10_000)
        XCTAssertEqual(check(try ServiceAuthorisation.sign(late, by: owner).encoded(), at: 310_000), .challengeExpired)
        XCTAssertEqual(check(try ServiceAuthorisation.sign(late, by: owner).encoded(), at: 11_000), .reusedChallenge,
                       "an expired challenge is used up")

        // Each signer check uses the challenge up: one challenge, one attempt.
        func fresh(_ byte: UInt8) throws -> ServiceChallenge {
            try gate.issue(nonce: Bytes(repeating: byte, count: 16), wallSeconds: Self.issuedAt, nowMillis: 20_000)
        }
        XCTAssertEqual(check(try ServiceAuthorisation.sign(try fresh(2), by: owner).encoded(), revoked: [ownerID]), .revoked)
        let unknown = try P256PrivateKey.generate()
        XCTAssertEqual(check(try ServiceAuthorisation.sign(try fresh(3), by: unknown).encoded()), .unknownKey)
        XCTAssertEqual(check(try ServiceAuthorisation.sign(try fresh(4), by: owner).encoded(), directory(permissions: [.lock, .unlock, .remote])),
                       .insufficientPermission, "an owner key without manage")
        XCTAssertEqual(check(try ServiceAuthorisation.sign(try fresh(5), by: owner).encoded(), directory(.share)),
                       .insufficientPermission, "a share, whatever its permissions")
        let sixth = try fresh(6)
        var forged = try ServiceAuthorisation.sign(sixth, by: owner).encoded()
        forged[forged.count - 1] ^= 0x01
        XCTAssertEqual(check(forged), .badSignature)
        XCTAssertEqual(check(try ServiceAuthorisation.sign(sixth, by: owner).encoded()), .reusedChallenge,
                       "the forged attempt used the challenge up: a right answer to it comes too late")

        let fleet = try P256PrivateKey.generate()
        XCTAssertNil(check(try ServiceAuthorisation.sign(try fresh(8), by: fleet).encoded(), directory(.fleet, permissions: [.lock], key: fleet)),
                     "a fleet key needs no manage")
    }

    func testANewChallengeReplacesTheOldAndTheRememberedNoncesAreBounded() throws {
        var gate = ServiceChallengeGate(vehicleID: Self.vehicle, lifetimeSeconds: 30)
        let first = try gate.issue(nonce: Self.nonce, wallSeconds: 0, nowMillis: 0)
        XCTAssertEqual(first.expiresAt, 30)
        _ = try gate.issue(nonce: Bytes(repeating: 9, count: 16), wallSeconds: 0, nowMillis: 0)
        let answer = try ServiceAuthorisation.sign(first, by: owner).encoded()
        XCTAssertEqual(fault { () throws(FaultCode) in try gate.authorise(answer, nowMillis: 1, signers: directory(), isRevoked: { _ in false }) },
                       .unknownChallenge)
        var answers: [Bytes] = []
        for index in 0..<100 {
            let challenge = try gate.issue(nonce: Bytes(repeating: UInt8(index), count: 16), wallSeconds: 0, nowMillis: 0)
            answers.append(try ServiceAuthorisation.sign(challenge, by: owner).encoded())
            XCTAssertNoThrow(try gate.authorise(answers[index], nowMillis: 1, signers: directory(), isRevoked: { _ in false }))
        }
        func replay(_ index: Int) -> FaultCode? {
            fault { () throws(FaultCode) in try gate.authorise(answers[index], nowMillis: 1, signers: directory(), isRevoked: { _ in false }) }
        }
        XCTAssertEqual(replay(99), .reusedChallenge)
        XCTAssertEqual(replay(100 - ServiceChallengeGate.rememberedNonces), .reusedChallenge)
        XCTAssertEqual(replay(99 - ServiceChallengeGate.rememberedNonces), .unknownChallenge,
                       "only the last 16 nonces are remembered (a bound), and an old one is still refused")
        XCTAssertEqual(ServiceChallengeGate(vehicleID: Self.vehicle, lifetimeSeconds: 10_000).lifetimeSeconds, 600, "clamped")
    }
}
