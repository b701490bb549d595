// The signed remote command (docs/cloud.md "Remote commands"): the known-answer example byte
// for byte, strict decoding, and each of the verifier's checks with its fault.
import XCTest
@testable import Protocol

final class RemoteCommandTests: XCTestCase {
    /// The example in docs/cloud.md.
    static let scalar = "c9afa9d845ba75166b5c215767b1d6934e50c3db36e89b127b8a622b120f6721"
    static let publicHex = "0460fed4ba255a9d31c961eb74c6356d68c049b8923b61fa6ce669622e60f29fb67903fe1008b8bc99a41ae9e95628bc64f2f1b20c2d7e9f5177a3c294d4462299"
    static let bodyHex = "40010f2c9a1e5b7d4c3a9e8f1a2b3c4d5e6f0c4f434b2d53494d2d303030310268e7780068e7781eb18b86ce1389e46d"
    static let signatureHex = "989fcc55185c30791996f785bbe36e11508401005e0a816e516b2c0219d144883d78428dcb16916693c37a4ebc5f408c91623c348a9db8b419b92b2364da2a1c"
    static let commandID = Bytes(hex: "0f2c9a1e5b7d4c3a9e8f1a2b3c4d5e6f")!
    static let vehicle = try! VehicleID("OCK-SIM-0001")
    static let issuedAt: UInt32 = 1_760_000_000

    struct Directory: RemoteSignerDirectory {
        var signers: [KeyID: RemoteSigner] = [:]
        func remoteSigner(_ keyID: KeyID) -> RemoteSigner? { signers[keyID] }
    }

    private let owner = try! P256PrivateKey(rawScalar: Bytes(hex: RemoteCommandTests.scalar)!)

    private func directory(_ kind: RemoteSigner.Kind = .owner, permissions: Permissions = .all) -> Directory {
        let signer = RemoteSigner(keyID: KeyID(publicKey: owner.publicKey), publicKey: owner.publicKey, kind: kind, permissions: permissions)
        return Directory(signers: [signer.keyID: signer])
    }

    private func trusted(_ seconds: Int64) -> RemoteCheckTime { RemoteCheckTime(seconds: seconds, trusted: true, mark: nil) }

    private func verify(_ bytes: Bytes, _ directory: Directory? = nil, time: RemoteCheckTime? = nil,
                        revoked: Set<KeyID> = []) throws(FaultCode) -> VerifiedRemoteCommand {
        try RemoteCommandVerifier.verify(bytes, vehicleID: Self.vehicle, signers: directory ?? self.directory(),
                                         isRevoked: { revoked.contains($0) }, time: time ?? trusted(Int64(Self.issuedAt) + 1))
    }

    private func fault(_ body: () throws(FaultCode) -> VerifiedRemoteCommand) -> FaultCode? {
        do throws(FaultCode) { _ = try body(); return nil } catch { return error }
    }

    private func issue(_ action: RemoteAction = .unlock, vehicle: VehicleID = RemoteCommandTests.vehicle,
                       issuedAt: UInt32 = RemoteCommandTests.issuedAt, lifetime: UInt32 = 30) throws -> Bytes {
        try RemoteCommand.issue(by: owner, commandID: Self.commandID, vehicleID: vehicle, action: action, issuedAt: issuedAt,
                                lifetimeSeconds: lifetime).encoded()
    }

    func testKnownAnswerExampleMatchesTheDocumentByteForByte() throws {
        XCTAssertEqual(owner.publicKey.sec1.hexString, Self.publicHex)
        let command = try RemoteCommand.issue(by: owner, commandID: Self.commandID, vehicleID: Self.vehicle, action: .unlock,
                                              issuedAt: Self.issuedAt)
        XCTAssertEqual(command.body.hexString, Self.bodyHex)
        XCTAssertEqual(command.uuidString, "0f2c9a1e-5b7d-4c3a-9e8f-1a2b3c4d5e6f")
        XCTAssertEqual(command.signatureInput.count, 19 + 48, "longer than 36 bytes and labelled: never an AuthResponse")
        let documented = Bytes(hex: Self.bodyHex + Self.signatureHex)!
        let decoded = try RemoteCommand.decode(documented)
        XCTAssertEqual(decoded.encoded(), documented)
        XCTAssertEqual(decoded.action, .unlock)
        XCTAssertEqual(decoded.expiresAt, Self.issuedAt + 30)
        XCTAssertNoThrow(try verify(documented))
        let docs = try String(contentsOfFile: #filePath.components(separatedBy: "/Tests/")[0] + "/docs/cloud.md", encoding: .utf8)
        XCTAssertTrue(docs.contains(Self.bodyHex) && docs.contains(Self.signatureHex), "docs/cloud.md carries the example")
    }

    func testDecodingIsStrict() throws {
        let good = try issue()
        XCTAssertThrowsError(try RemoteCommand.decode(good + [0]))
        XCTAssertThrowsError(try RemoteCommand.decode(Array(good.dropLast())))
        XCTAssertThrowsError(try RemoteCommand.decode([]))
        var badAction = good; badAction[19 + 12] = 9
        XCTAssertThrowsError(try RemoteCommand.decode(badAction))
        var badVersion = good; badVersion[1] = 2
        XCTAssertEqual(fault { () throws(FaultCode) in try verify(badVersion) }, .unsupportedVersion)
        XCTAssertEqual(fault { () throws(FaultCode) in try verify(Array(repeating: 0x40, count: 400)) }, .malformedMessage)
        XCTAssertThrowsError(try RemoteCommand.issue(by: owner, commandID: Self.commandID, vehicleID: Self.vehicle, action: .lock,
                                                     issuedAt: Self.issuedAt, lifetimeSeconds: 61))
    }

    func testEveryAlteredByteIsRefused() throws {
        let good = try issue()
        for index in good.indices {
            var altered = good
            altered[index] ^= 0x01
            XCTAssertNotNil(fault { () throws(FaultCode) in try verify(altered) }, "byte \(index)")
        }
    }

    func testChecksAndTheirFaults() throws {
        let good = try issue()
        XCTAssertNoThrow(try verify(good))
        let other = try P256PrivateKey.generate()
        let stranger = try RemoteCommand.issue(by: other, commandID: Self.commandID, vehicleID: Self.vehicle, action: .unlock,
                                               issuedAt: Self.issuedAt).encoded()
        XCTAssertEqual(fault { () throws(FaultCode) in try verify(stranger) }, .unknownKey)
        XCTAssertEqual(fault { () throws(FaultCode) in try verify(good, revoked: [KeyID(publicKey: owner.publicKey)]) }, .revoked)
        let elsewhere = try issue(vehicle: try VehicleID("OCK-SIM-0002"))
        XCTAssertEqual(fault { () throws(FaultCode) in try verify(elsewhere) }, .wrongVehicle)
        XCTAssertEqual(fault { () throws(FaultCode) in try verify(good, directory(.share, permissions: [.unlock, .lock])) }, .insufficientPermission)
        XCTAssertEqual(fault { () throws(FaultCode) in try verify(good, directory(.owner, permissions: [.lock, .remote])) }, .insufficientPermission)
        XCTAssertNoThrow(try verify(good, directory(.share, permissions: [.unlock, .remote])))
        XCTAssertNoThrow(try verify(good, directory(.fleet, permissions: [.lock, .unlock, .trunk, .remote])))
        // A forged signature (another key's, same fields).
        var forged = good
        forged.replaceSubrange((good.count - 64)..., with: stranger.suffix(64))
        XCTAssertEqual(fault { () throws(FaultCode) in try verify(forged) }, .badSignature)
    }

    func testTimeRules() throws {
        let good = try issue()
        let issued = Int64(Self.issuedAt)
        XCTAssertEqual(fault { () throws(FaultCode) in try verify(good, time: trusted(issued + 30)) }, .expired)
        XCTAssertEqual(fault { () throws(FaultCode) in try verify(good, time: trusted(issued - 6)) }, .notYetValid)
        XCTAssertNoThrow(try verify(good, time: trusted(issued - 5)), "5 s of clock skew")
        XCTAssertNoThrow(try verify(good, time: trusted(issued + 29)))
        // Untrusted clock: decided against the trusted-time mark.
        XCTAssertEqual(fault { () throws(FaultCode) in try verify(good, time: RemoteCheckTime(seconds: 0, trusted: false, mark: nil)) }, .clockNotTrusted)
        XCTAssertEqual(fault { () throws(FaultCode) in try verify(good, time: RemoteCheckTime(seconds: 0, trusted: false, mark: issued + 30)) }, .expired)
        XCTAssertEqual(fault { () throws(FaultCode) in try verify(good, time: RemoteCheckTime(seconds: 0, trusted: false, mark: issued - 61)) }, .clockNotTrusted)
        XCTAssertNoThrow(try verify(good, time: RemoteCheckTime(seconds: 0, trusted: false, mark: issued - 10)))
    }
}
