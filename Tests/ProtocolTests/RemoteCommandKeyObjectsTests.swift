// The revocation list and the fleet key grant (docs/cloud.md): known-answer examples byte for
// byte, strict decoding, and the validators' faults.
import XCTest
@testable import Protocol

final class RemoteCommandKeyObjectsTests: XCTestCase {
    static let listBodyHex = "41010c4f434b2d53494d2d3030303100000002b18b86ce1389e46d68e7780000016431010c4f434b2d53494d2d30303031b18b86ce1389e46d68e778000201020304050607087551d22e9de7d69f4f975092a19da444c8ea209f03be4a698958360002cf705dc3c059c61888b154c3831d3833cd4ae476cbe3b4c26b6c6e45b727030f71091c"
    static let listSignatureHex = "f7aeacb733c1d7d4e85fb89231adf945954201a1148e06eca6e5824ead13ed8d598359922a2186f23e48a86940d781777fb30b104cb946bfefd3947155bf7b42"
    static let fleetScalar = "0f56db78ca460b055c500064824bed999a25aaf48ebb519ac201537b85479813"
    static let fleetPublicHex = "04e266ddfdc12668db30d4ca3e8f7749432c416044f2d2b8c10bf3d4012aeffa8abfa86404a2e9ffe67d47c587ef7a97a7f456b863b4d02cfc6928973ab5b1cb39"
    static let grantBodyHex = "42010c4f434b2d53494d2d3030303104e266ddfdc12668db30d4ca3e8f7749432c416044f2d2b8c10bf3d4012aeffa8abfa86404a2e9ffe67d47c587ef7a97a7f456b863b4d02cfc6928973ab5b1cb3968e77800b18b86ce1389e46d"
    static let grantSignatureHex = "0ece556b3b407e150f3e490c78e6d4f219c51b2ef515b7fca90c0008d43e99db4d6b86bf16dc2fcf78d9ea043b0477ebd2c59e9731dafa4770234eeae0ca5e34"

    private let owner = try! P256PrivateKey(rawScalar: Bytes(hex: RemoteCommandTests.scalar)!)
    private let vehicle = RemoteCommandTests.vehicle

    private var ownerDirectory: InMemoryKeyDirectory {
        let directory = InMemoryKeyDirectory()
        directory.upsert(KeyRecord(publicKey: owner.publicKey, role: .owner, permissions: .all))
        return directory
    }

    private var docs: String {
        (try? String(contentsOfFile: #filePath.components(separatedBy: "/Tests/")[0] + "/docs/cloud.md", encoding: .utf8)) ?? ""
    }

    func testRevocationListKnownAnswer() throws {
        let documented = Bytes(hex: Self.listBodyHex + Self.listSignatureHex)!
        let list = try RevocationList.decode(documented)
        XCTAssertEqual(list.encoded(), documented)
        XCTAssertEqual(list.listVersion, 2)
        XCTAssertEqual(list.entries.count, 1)
        let entry = try Revocation.decode(list.entries[0])
        XCTAssertEqual(entry.target, .key(try KeyID(bytes: Bytes(hex: "0102030405060708")!)))
        // Re-issued with the same fields: the same body byte for byte.
        let again = try RevocationList.issue(by: owner, vehicleID: vehicle, listVersion: 2, issuedAt: 1_760_000_000, revocations: [entry])
        XCTAssertEqual(again.body.hexString, Self.listBodyHex)
        XCTAssertNoThrow(try RevocationListValidator.verify(documented, vehicleID: vehicle, keys: ownerDirectory))
        XCTAssertTrue(docs.contains(Self.listBodyHex) && docs.contains(Self.listSignatureHex))
    }

    func testRevocationListChecks() throws {
        let good = try RevocationList.issue(by: owner, vehicleID: vehicle, listVersion: 3, issuedAt: 1, revocations: []).encoded()
        func fault(_ bytes: Bytes, _ keys: any KeyDirectory, vehicle: VehicleID? = nil) -> FaultCode? {
            do throws(FaultCode) { _ = try RevocationListValidator.verify(bytes, vehicleID: vehicle ?? self.vehicle, keys: keys); return nil } catch { return error }
        }
        XCTAssertNil(fault(good, ownerDirectory))
        XCTAssertEqual(fault(good, InMemoryKeyDirectory()), .invalidRevocation)
        XCTAssertEqual(fault(good, ownerDirectory, vehicle: try VehicleID("OTHER")), .wrongVehicle)
        var altered = good; altered[altered.count - 70] ^= 1
        XCTAssertEqual(fault(altered, ownerDirectory), .invalidRevocation)
        XCTAssertEqual(fault(good + [0], ownerDirectory), .malformedMessage)
        let share = InMemoryKeyDirectory()
        share.upsert(KeyRecord(publicKey: owner.publicKey, role: .shared, permissions: [.unlock, .lock, .trunk, .remote]))
        XCTAssertEqual(fault(good, share), .invalidRevocation, "only owners sign lists")
        XCTAssertThrowsError(try RevocationList.issue(by: owner, vehicleID: vehicle, listVersion: 0, issuedAt: 1, revocations: []))
    }

    func testFleetKeyGrantKnownAnswerAndChecks() throws {
        let fleet = try P256PrivateKey(rawScalar: Bytes(hex: Self.fleetScalar)!)
        XCTAssertEqual(fleet.publicKey.sec1.hexString, Self.fleetPublicHex)
        let documented = Bytes(hex: Self.grantBodyHex + Self.grantSignatureHex)!
        let grant = try FleetKeyGrant.decode(documented)
        XCTAssertEqual(grant.encoded(), documented)
        XCTAssertEqual(try FleetKeyGrant.issue(by: owner, vehicleID: vehicle, fleetKey: fleet.publicKey, issuedAt: 1_760_000_000).body.hexString,
                       Self.grantBodyHex)
        XCTAssertTrue(docs.contains(Self.grantBodyHex) && docs.contains(Self.grantSignatureHex))

        let ownerSigner = RemoteSigner(keyID: KeyID(publicKey: owner.publicKey), publicKey: owner.publicKey, kind: .owner, permissions: .all)
        let fleetSigner = RemoteSigner(keyID: grant.fleetKeyID, publicKey: fleet.publicKey, kind: .fleet, permissions: [.lock, .unlock, .trunk, .remote])
        func verify(_ bytes: Bytes, _ signers: [RemoteSigner], revoked: Set<KeyID> = []) -> Result<VerifiedFleetKeyGrant, FaultCode> {
            let directory = RemoteCommandTests.Directory(signers: Dictionary(uniqueKeysWithValues: signers.map { ($0.keyID, $0) }))
            do throws(FaultCode) {
                return .success(try FleetKeyGrantValidator.verify(bytes, vehicleID: vehicle, signers: directory, isRevoked: { revoked.contains($0) }))
            } catch { return .failure(error) }
        }
        XCTAssertEqual(try verify(documented, [ownerSigner]).get().rotation, false)
        XCTAssertEqual(verify(documented, []), .failure(.unknownKey))
        XCTAssertEqual(verify(documented, [ownerSigner], revoked: [grant.fleetKeyID]), .failure(.revoked))
        var altered = documented; altered[10] ^= 1
        if case .success = verify(altered, [ownerSigner]) { XCTFail("an altered grant verified") }
        // Rotation: the current fleet key signs its successor.
        let next = try P256PrivateKey.generate()
        let rotation = try FleetKeyGrant.issue(by: fleet, vehicleID: vehicle, fleetKey: next.publicKey, issuedAt: 1).encoded()
        XCTAssertEqual(try verify(rotation, [ownerSigner, fleetSigner]).get().rotation, true)
        let share = RemoteSigner(keyID: grant.fleetKeyID, publicKey: fleet.publicKey, kind: .share, permissions: [.unlock, .remote])
        XCTAssertEqual(verify(rotation, [share]), .failure(.insufficientPermission))
    }
}
