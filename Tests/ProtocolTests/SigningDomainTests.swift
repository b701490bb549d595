// docs/protocol.md 18.11 lists every signing domain with the size of its signed input as a
// formula ("456 + L"). Each structure is built here with the code's own encoders, for vehicle
// IDs of several lengths, and its signed input's size is compared with the documented formula.
// (The audit checkpoint's row is checked by the Drivers tests, where the checkpoint lives.)
import Foundation
import XCTest
@testable import Protocol

/// The rows of the 18.11 table: label -> size formula.
enum SigningDomainTable {
    static func rows(in doc: String) -> [String: String] {
        guard let start = doc.range(of: "### 18.11 Signing domains"),
              let end = doc.range(of: "### 18.12", range: start.upperBound..<doc.endIndex) else { return [:] }
        var rows: [String: String] = [:]
        for line in doc[start.upperBound..<end.lowerBound].split(separator: "\n") where line.hasPrefix("| `OCK1-") {
            let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count == 4 else { continue }
            rows[cells[0].trimmingCharacters(in: CharacterSet(charactersIn: "`"))] = cells[3]
        }
        return rows
    }

    /// Evaluates "c + X + k × Y" with the given variables; nil when a term is not understood.
    static func evaluate(_ formula: String, _ variables: [String: Int]) -> Int? {
        var total = 0
        for term in formula.components(separatedBy: " + ") {
            let factors = term.components(separatedBy: " × ")
            var product = 1
            for factor in factors {
                if let number = Int(factor) { product *= number } else if let value = variables[factor] { product *= value } else { return nil }
            }
            total += product
        }
        return total
    }
}

final class SigningDomainTests: XCTestCase {
    private let signer = Fixtures.key("OCK1 signing domain test key")
    private let other = Fixtures.key("OCK1 signing domain other key")

    private func vehicle(_ length: Int) throws -> VehicleID { try VehicleID(String(repeating: "V", count: length)) }

    /// label -> [(variables, signed input size)] from the code.
    private func measured() throws -> [String: [([String: Int], Int)]] {
        var out: [String: [([String: Int], Int)]] = [:]
        func add(_ label: Bytes, _ variables: [String: Int], _ input: Bytes) {
            XCTAssertEqual(Array(input.prefix(label.count)), label, "the input starts with its label")
            out[String(decoding: label, as: UTF8.self), default: []].append((variables, input.count))
        }
        let ephemeral = other.publicKey.sec1
        for length in [1, 17, 32] {
            let id = try vehicle(length)
            let l = ["L": length]
            for certificateLength in [0, 120] {
                let hello = try HelloMessage(keyID: KeyID(publicKey: signer.publicKey), ephemeralPublicKey: ephemeral,
                                             shareCertificate: Bytes(repeating: 7, count: certificateLength)).encoded()
                let body = ChallengeMessage.body(challenge: Bytes(repeating: 1, count: 32), carEphemeralPublicKey: ephemeral, vehicleID: id)
                add(ChallengeMessage.signatureLabel, ["L": length, "H": certificateLength], ChallengeMessage.signatureInput(hello: hello, body: body))
            }
            let share = try ShareCertificate.issue(by: signer, holder: other.publicKey, vehicleID: id, permissions: .unlock,
                                                   notBefore: 0, notAfter: 100, serial: try ShareSerial(bytes: Bytes(repeating: 3, count: 8)))
            add(ShareCertificate.signatureLabel, l, share.signatureInput)
            let revocation = try Revocation.issue(by: signer, vehicleID: id, target: .key(KeyID(publicKey: other.publicKey)), issuedAt: 5)
            add(Revocation.signatureLabel, l, revocation.signatureInput)

            // Pairing: the documented exchange's messages, with this vehicle ID in the challenge.
            let kat = Dictionary(uniqueKeysWithValues: try PairingKAT.values())
            let pairingHello = try XCTUnwrap(kat["PairingHello"])
            let pairingBody = PairingChallengeMessage.body(challenge: PairingKAT.challenge, windowID: PairingKAT.windowID,
                                                           carIdentityPublicKey: PairingKAT.carIdentity.publicKey.sec1, vehicleID: id,
                                                           shareV: try XCTUnwrap(kat["shareV"]), confirmV: try XCTUnwrap(kat["confirmV"]))
            add(PairingChallengeMessage.signatureLabel, l, PairingChallengeMessage.signatureInput(pairingHello: pairingHello, body: pairingBody))
            let pairingChallenge = try PairingChallengeMessage(challenge: PairingKAT.challenge, windowID: PairingKAT.windowID,
                                                               carIdentityPublicKey: PairingKAT.carIdentity.publicKey.sec1, vehicleID: id,
                                                               shareV: try XCTUnwrap(kat["shareV"]), confirmV: try XCTUnwrap(kat["confirmV"]),
                                                               signature: Bytes(repeating: 9, count: 64)).encoded()
            add(PairingSPAKE.possessionLabel, l, PairingSPAKE.possessionInput(pairingHello: pairingHello, pairingChallenge: pairingChallenge,
                                                                              confirmP: try XCTUnwrap(kat["confirmP"])))

            let challenge = try ServiceChallenge(nonce: Bytes(repeating: 2, count: 16), vehicleID: id, issuedAt: 10, expiresAt: 20)
            let answer = try ServiceAuthorisation.sign(challenge, by: signer)
            add(ServiceAuthorisation.signatureLabel, ["C": challenge.encoded().count], answer.signatureInput)

            let command = try RemoteCommand.issue(by: signer, commandID: Bytes(repeating: 4, count: 16), vehicleID: id, action: .lock,
                                                  issuedAt: 1000)
            add(RemoteCommand.signatureLabel, l, command.signatureInput)
            for entries in [0, 2] {
                let revocations = try (0..<entries).map { _ in try Revocation.issue(by: signer, vehicleID: id, target: .key(KeyID(publicKey: other.publicKey)), issuedAt: 1) }
                let list = try RevocationList.issue(by: signer, vehicleID: id, listVersion: 1, issuedAt: 1, revocations: revocations)
                add(RevocationList.signatureLabel, ["L": length, "E": revocations.map { 1 + $0.encoded().count }.reduce(0, +)], list.signatureInput)
            }
            let grant = try FleetKeyGrant.issue(by: signer, vehicleID: id, fleetKey: other.publicKey, issuedAt: 1)
            add(FleetKeyGrant.signatureLabel, l, grant.signatureInput)
            for payload in [#"{}"#, #"{"logLevel":"debug"}"#] {
                let document = try SignedConfig.issue(by: signer, vehicleID: id, version: 1, issuedAt: 1, expiresAt: 100, payload: Bytes(payload.utf8))
                add(SignedConfig.signatureLabel, ["L": length, "P": payload.utf8.count], document.signatureInput)
            }
        }
        return out
    }

    func testDocumentedSignedInputSizesMatchTheCode() throws {
        let doc = try XCTUnwrap(readRepositoryFile("docs/protocol.md"), "docs/protocol.md missing")
        let rows = SigningDomainTable.rows(in: doc)
        let measured = try measured()
        XCTAssertEqual(Set(rows.keys), Set(measured.keys).union(["OCK1-AUDIT-CHECKPOINT"]), "18.11 lists every signing domain")
        for (label, samples) in measured {
            let formula = try XCTUnwrap(rows[label], "18.11 lacks \(label)")
            for (variables, size) in samples {
                XCTAssertEqual(SigningDomainTable.evaluate(formula, variables), size, "\(label): \(formula) with \(variables)")
                XCTAssertGreaterThan(size, 36, "\(label) is longer than an AuthResponse's signed data")
            }
        }
    }
}
