// The audit chain in the store: every appended event links to the previous one, the links are
// published with the event, tamper findings are chained, and checkpoints are signed and queued.
import XCTest
@testable import Drivers
import Protocol

final class AuditChainTests: StorageTestCase {
    /// The known-answer vector printed in docs/cloud.md ("Audit chain and checkpoints").
    static let vectorFields = EventCanonical.Fields(
        seq: 7, uuid: "0f2c9a1e-5b7d-4c3a-9e8f-1a2b3c4d5e6f", time: 1_760_000_000, timeTrusted: true, kind: "access-decision",
        actor: "a1b2c3d4e5f60708", action: "unlock", result: "refused", faultCode: 5, faultName: "insufficientPermission",
        detail: #"{"link":3}"#)
    static let vectorPrev = Bytes(repeating: 0x11, count: 32)

    func testCanonicalEncodingKnownAnswer() {
        let encoded = EventCanonical.encode(Self.vectorFields, prevHash: Self.vectorPrev)
        XCTAssertEqual(encoded.hexString,
            "4f434b312d41554449542d4556454e54" + String(repeating: "11", count: 32)
            + "0000000000000007" + "00000024" + Bytes("0f2c9a1e-5b7d-4c3a-9e8f-1a2b3c4d5e6f".utf8).hexString
            + "0000000068e77800" + "01" + "0000000f" + Bytes("access-decision".utf8).hexString
            + "01" + "00000010" + Bytes("a1b2c3d4e5f60708".utf8).hexString
            + "00000006" + Bytes("unlock".utf8).hexString + "00000007" + Bytes("refused".utf8).hexString
            + "01" + "01" + "0000000000000005" + "00000016" + Bytes("insufficientPermission".utf8).hexString
            + "0000000a" + Bytes(#"{"link":3}"#.utf8).hexString)
        XCTAssertEqual(EventCanonical.hash(Self.vectorFields, prevHash: Self.vectorPrev).hexString, Self.vectorHash)
    }

    static let vectorHash = "284a10317915e8d7dc8b4af6d365be2af1fbe11d132bf766baf145f26beebaea"

    /// docs/cloud.md's three `fault ...` lines: the fault's bytes in the canonical encoding for
    /// a fault with a code, one whose code is null, and none.
    func testDocumentedFaultEncodings() throws {
        let lines = CloudDocument.text.split(separator: "\n").filter { $0.hasPrefix("fault ") }
        XCTAssertEqual(lines.count, 3, "docs/cloud.md shows three fault encodings")
        for line in lines {
            let text = String(line.dropFirst("fault ".count))
            let end = text.hasPrefix("null") ? text.index(text.startIndex, offsetBy: 4)
                                              : try XCTUnwrap(text.range(of: "}")).upperBound
            let json = String(text[..<end])
            let documented = text[end...].replacingOccurrences(of: " ", with: "")
            var fields = Self.vectorFields
            if case .success(.object(let fault)) = JSONTree.decode(Bytes(json.utf8)) {
                fields.faultName = fault["name"]?.stringValue
                if case .integer(let code)? = fault["code"] { fields.faultCode = code } else { fields.faultCode = nil }
            } else {
                XCTAssertEqual(json, "null")
                fields.faultName = nil
                fields.faultCode = nil
            }
            // The fault sits between the result and the detail: what differs from the encoding
            // without a fault (whose fault part is the single byte 00).
            var none = Self.vectorFields
            none.faultName = nil
            none.faultCode = nil
            let without = EventCanonical.encode(none, prevHash: Self.vectorPrev)
            let with = EventCanonical.encode(fields, prevHash: Self.vectorPrev)
            let detailLength = 4 + Self.vectorFields.detail!.utf8.count
            let before = without.count - detailLength - 1
            XCTAssertEqual(Array(with[before..<(with.count - detailLength)]).hexString, documented, json)
        }
    }

    func testEventsLinkToTheirPredecessorFromGenesis() throws {
        let store = try openStore()
        let stored = try (0..<3).map { _ in try store.appendEvent(accessEvent("unlock")) }
        let links = stored.compactMap(\.chain)
        XCTAssertEqual(links.count, 3)
        XCTAssertEqual(links[0].prevHash, EventChainLink.genesis)
        XCTAssertEqual(links[1].prevHash, links[0].hash)
        XCTAssertEqual(links[2].prevHash, links[1].hash)
        for event in stored {
            XCTAssertEqual(EventCanonical.hash(.init(seq: event.seq, uuid: event.uuid, event: event.event), prevHash: event.chain!.prevHash),
                           event.chain!.hash)
        }
        XCTAssertEqual(try store.events(), stored, "the links are stored and read back")
        XCTAssertEqual(try store.auditChainHead(), AuditChainHead(seq: 3, hash: links[2].hash))
    }

    func testTheChainContinuesAfterEveryEventWasTrimmed() throws {
        let store = try openStore()
        let first = try store.appendEvent(accessEvent("lock"))
        try store.write { transaction in
            try transaction.markEventsPublished(through: 1)
            XCTAssertEqual(try transaction.trimEvents(keepingLatest: 0), 1)
        }
        let next = try openStore().appendEvent(accessEvent("unlock"))
        XCTAssertEqual(next.chain?.prevHash, first.chain?.hash, "the head survives a log with no rows")
    }

    func testPublishedPayloadCarriesTheLinkAndTheVerifierRecomputesIt() throws {
        let store = try openStore()
        let stored = try store.appendEvent(NewEvent(kind: .storage, time: EventTime(seconds: 5, trusted: false), action: EventAction(unlisted: "x"),
                                                    result: "ok", detailJSON: #" { "a" : [1, 2.5e3, "\u00e9"] } "#))
        let payload = EventPayload.encode(stored)
        let text = String(decoding: payload, as: UTF8.self)
        XCTAssertTrue(text.hasSuffix(#","prevHash":"\#(EventChainLink.genesis.hexString)","hash":"\#(stored.chain!.hash.hexString)"}"#), text)
        let line = try XCTUnwrap(AuditEventLine(json: payload))
        XCTAssertEqual(line.chain, stored.chain)
        XCTAssertEqual(line.recomputedHash, stored.chain?.hash, "the detail's exact text is what is hashed")
    }

    func testTamperFindingsAreChainedEvents() throws {
        let store = try openStore()
        try store.write { try $0.put([1, 2, 3], kind: .key, id: [9]) }
        var blob = try sealedBlob(kind: .key, id: [9])
        blob[blob.count - 1] ^= 1
        try setSealedBlob(blob, kind: .key, id: [9])
        XCTAssertThrowsError(try store.read { try $0.get(kind: .key, id: [9]) })
        let tamper = try XCTUnwrap(tamperEvents(store).first)
        let chain = try XCTUnwrap(tamper.chain)
        XCTAssertEqual(try store.auditChainHead()?.hash, chain.hash)
        var verifier = AuditVerifier(carKey: try P256PrivateKey.generate().publicKey)
        for event in try store.events() { verifier.add(EventPayload.encode(event)) }
        XCTAssertTrue(verifier.verify().intact)
        XCTAssertEqual(AuditEventLine(json: EventPayload.encode(tamper))?.fields.kind, "tamper")
    }

    func testCheckpointIsSignedStoredAndQueuedOnTheAuditTopic() throws {
        let store = try openStore()
        let key = try P256PrivateKey.generate()
        let topics = CloudTopics(vehicleID: "VIN1")
        XCTAssertNil(try store.writeAuditCheckpoint(key: key, vehicleID: topics.vehicleID, topic: topics.audit, time: EventTime(seconds: 1, trusted: true)),
                     "nothing to vouch for yet")
        let last = try (0..<4).map { _ in try store.appendEvent(accessEvent("lock")) }.last!
        let checkpoint = try XCTUnwrap(store.writeAuditCheckpoint(key: key, vehicleID: topics.vehicleID, topic: topics.audit, time: EventTime(seconds: 9, trusted: true)))
        XCTAssertEqual(checkpoint.seq, 4)
        XCTAssertEqual(checkpoint.headHash, last.chain?.hash)
        XCTAssertTrue(checkpoint.isValid(carKey: key.publicKey))
        XCTAssertEqual(try store.auditCheckpoints(), [checkpoint])
        let queued = try rawScalar("SELECT payload FROM outbox WHERE topic = ?1", [.text(topics.audit)])
        guard case .blob(let payload)? = queued else { return XCTFail("no checkpoint in the outbox") }
        XCTAssertEqual(AuditCheckpoint(json: payload), checkpoint)
        var forged = checkpoint
        forged.seq = 3
        XCTAssertFalse(forged.isValid(carKey: key.publicKey))
    }

    func testUpgradedDatabaseStartsTheChainAtGenesisAfterOldRows() throws {
        _ = try layout.prepare()
        let old = try Database(path: layout.databasePath, create: false)
        try old.migrate(to: Schema(applicationID: StoreSchema.applicationID, migrations: Array(StoreSchema.schema.migrations.prefix(3))))
        try old.transaction { connection in
            for _ in 0..<2 { _ = try EventLog.append(self.accessEvent("lock"), connection: connection, random: SystemRandom()) }
        }
        let store = try openStore()
        let next = try store.appendEvent(accessEvent("unlock"))
        XCTAssertEqual(next.seq, 3)
        XCTAssertEqual(next.chain?.prevHash, EventChainLink.genesis)
        XCTAssertEqual(try store.events().map { $0.chain == nil }, [true, true, false], "old rows stay unchained")
    }
}
