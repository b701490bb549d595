// The audit checkpoint example of docs/cloud.md ("Audit chain and checkpoints"), read from the
// document: the published JSON parses to a checkpoint whose signed input is the documented
// bytes, whose signature verifies under the documented car key (ECDSA is randomized: the
// signature is given, then verified), and which serialises back to the documented JSON byte
// for byte. Its signed input's size also matches docs/protocol.md 18.11's formula.
//
// To print a fresh example after an intentional format change:
//   OCK_PRINT_CHECKPOINT_KAT=1 swift test --skip-build --filter AuditCheckpointKnownAnswerTests/testPrintExample
import Foundation
import XCTest
@testable import Drivers
import Protocol

final class AuditCheckpointKnownAnswerTests: XCTestCase {
    /// The car identity scalar of docs/protocol.md section 13.
    static let carScalar = Bytes(hex: "47103f79367dcbe55645c5f18b28b0d49e14f259861fb064b5969d55d7e1629a")!
    static let example = AuditCheckpoint(vehicle: "OCK-KAT-VEHICLE-1", seq: 7,
                                         headHash: Bytes(hex: AuditChainTests.vectorHash)!, time: 1_760_000_000, timeTrusted: true,
                                         pruned: [PrunedRange(from: 3, to: 5, lastHash: Bytes(repeating: 0x22, count: 32))])

    /// The fenced blocks after "**Checkpoint known answer**", in order, and the paragraph.
    static func documented() throws -> (paragraph: String, blocks: [String]) {
        let doc = CloudDocument.text
        let start = try XCTUnwrap(doc.range(of: "**Checkpoint known answer**"), "docs/cloud.md has no checkpoint known answer")
        let rest = doc[start.lowerBound...]
        let paragraph = String(rest[..<(rest.range(of: "```")?.lowerBound ?? rest.endIndex)])
        var blocks: [String] = []
        var current: [Substring]?
        for line in rest.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("```") {
                if let lines = current { blocks.append(lines.joined(separator: "\n")); current = nil } else { current = [] }
                if blocks.count == 3 { break }
            } else if current != nil {
                current?.append(line)
            }
        }
        return (paragraph, blocks)
    }

    func testTheDocumentedCheckpointVerifiesAndRoundTrips() throws {
        let (paragraph, blocks) = try Self.documented()
        XCTAssertEqual(blocks.count, 3, "signed input, signature, published JSON")
        guard blocks.count == 3 else { return }
        let signedInput = blocks[0].replacingOccurrences(of: "\n", with: "")
        let signature = blocks[1].replacingOccurrences(of: "\n", with: "")
        let json = blocks[2]

        let checkpoint = try XCTUnwrap(AuditCheckpoint(json: Bytes(json.utf8)), "the documented JSON is a checkpoint")
        XCTAssertEqual(checkpoint.json, json, "the car publishes exactly this JSON for these fields")
        XCTAssertEqual(checkpoint.signedBytes.hexString, signedInput, "signed input")
        XCTAssertEqual(checkpoint.signature.hexString, signature)
        var unsigned = checkpoint
        unsigned.signature = []
        XCTAssertEqual(unsigned, Self.example, "the documented fields")

        let car = try P256PrivateKey(rawScalar: Self.carScalar)
        XCTAssertTrue(paragraph.contains(car.publicKey.sec1.hexString), "the paragraph names the car's public key")
        XCTAssertTrue(checkpoint.isValid(carKey: car.publicKey), "the documented signature verifies")
        XCTAssertTrue(json.contains(#""headHash":"\#(AuditChainTests.vectorHash)""#), "the head is the event known answer's hash")
        XCTAssertFalse(json.contains(#""id":"#), "a checkpoint carries no id")

        // docs/protocol.md 18.11's row for this label.
        let protocolDoc = try String(contentsOfFile: #filePath.components(separatedBy: "/Tests/")[0] + "/docs/protocol.md", encoding: .utf8)
        let row = try XCTUnwrap(protocolDoc.split(separator: "\n").first { $0.hasPrefix("| `OCK1-AUDIT-CHECKPOINT`") })
        let formula = try XCTUnwrap(row.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }.last)
        var total = 0
        for term in formula.components(separatedBy: " + ") {
            let factors = term.components(separatedBy: " × ")
            total += factors.reduce(1) { product, factor in
                product * (Int(factor) ?? ["V": checkpoint.vehicle.utf8.count, "R": checkpoint.pruned.count][factor] ?? -1_000_000)
            }
        }
        XCTAssertEqual(total, checkpoint.signedBytes.count, "protocol.md 18.11: \(formula)")
    }

    func testPrintExample() throws {
        guard getenv("OCK_PRINT_CHECKPOINT_KAT") != nil else { return }
        let car = try P256PrivateKey(rawScalar: Self.carScalar)
        let signed = try Self.example.signed(with: car)
        print("CHECKPOINT-KAT public key \(car.publicKey.sec1.hexString)")
        print("CHECKPOINT-KAT signed input \(signed.signedBytes.count) \(signed.signedBytes.hexString)")
        print("CHECKPOINT-KAT signature \(signed.signature.hexString)")
        print("CHECKPOINT-KAT json \(signed.json)")
    }
}
