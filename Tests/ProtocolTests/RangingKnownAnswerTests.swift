// The UWB ranging example of docs/protocol.md section 19, byte for byte: from the section 13
// ranging key to the STS key and IV of round 1 and the tagged Poll, Response and Final.
//
// To print the values after an intentional format change:
//   OCK_PRINT_RANGING_KAT=1 swift test --skip-build --filter RangingKnownAnswerTests/testPrintExample
import XCTest
#if canImport(Glibc)
import Glibc
#endif
@testable import Protocol

enum RangingKAT {
    /// keyRanging of section 13.
    static let rangingKey = Bytes(testHex: "b1b1fe22a9f9c94ce6e75964cec49808d0e744e25e5eac8f49159517603085ef")
    static let setup = try! RangingSetup(sessionID: 0x2f6b_41e9, channel: 9, preambleCode: 9, stsLength: 64,
                                         roundIntervalMillis: 100, replyDelayMicros: 1000, replyJitterMicros: 500,
                                         firstRound: 1)
    /// A Final whose round straddles the 40-bit wrap (poll_tx just below 2^40).
    static let stamps = InitiatorTimestamps(pollTx: UWBTimestamp(0xff_fff0_0000), responseRx: UWBTimestamp(0x00_03d1_e3a5),
                                            finalTx: UWBTimestamp(0x00_0864_2201))

    /// What a car with the default board (channel 9, preamble code 9, STS 64) accepts: the
    /// agent's capabilities for `BoardUWB`'s defaults (UWBServiceCapabilitiesTests checks it).
    static var defaultBoard: UWBCapabilities {
        var capabilities = UWBCapabilities()
        capabilities.channels = [9]
        capabilities.preambleCodes = [9]
        capabilities.stsLengths = [64]
        return capabilities
    }

    static func values() throws -> [(String, Bytes)] {
        var out: [(String, Bytes)] = []
        out.append(("rangingCapabilities Command plaintext",
                    try CommandBody(command: .rangingCapabilities, expiresAt: KAT.expiresAt).encoded()))
        out.append(("default board capabilities", defaultBoard.encoded()))
        out.append(("rangingCapabilities Response plaintext",
                    RangingCapabilitiesAnswer(vehicleState: [.locked, .trunkLocked], carTime: KAT.carTime, capabilities: defaultBoard).encoded()))
        out.append(("every value capabilities", UWBCapabilities().encoded()))
        out.append(("ranging key", rangingKey))
        out.append(("rangingSetup arguments", setup.encoded()))
        out.append(("rangingSetup Command plaintext",
                    try CommandBody(command: .rangingSetup, expiresAt: KAT.expiresAt, args: setup.encoded()).encoded()))
        let info = RangingMaterial.expandInfo + setup.encoded()
        out.append(("ranging HKDF-Expand info", info))
        out.append(("ranging OKM", RangingMaterial.expand(prk: rangingKey, info: info, length: 64)))
        let material = RangingMaterial(rangingKey: rangingKey, setup: setup)
        out.append(("STS key", material.stsKey))
        out.append(("STS IV base", material.stsIVBase))
        out.append(("frame key", material.frameKey))
        out.append(("STS IV round 1", material.stsIV(round: 1)))
        out.append(("Poll round 1", RangingFrame.poll(sessionID: setup.sessionID, round: 1).sealed(frameKey: material.frameKey)))
        out.append(("Response round 1", RangingFrame.response(sessionID: setup.sessionID, round: 1).sealed(frameKey: material.frameKey)))
        out.append(("Final round 1", RangingFrame.final(sessionID: setup.sessionID, round: 1, timestamps: stamps)
            .sealed(frameKey: material.frameKey)))
        return out
    }

    /// The documented values (docs/protocol.md section 19), cross-checked with Python's hmac
    /// and `openssl kdf ... mode:EXPAND_ONLY HKDF`.
    static let expected: [(String, String)] = [
        ("rangingCapabilities Command plaintext", "086955b90a00"),
        ("default board capabilities", "0102010203e80032"),
        ("rangingCapabilities Response plaintext", "08000000116955b9000102010203e80032"),
        ("every value capabilities", "01030f0703e80032"),
        ("ranging key", "b1b1fe22a9f9c94ce6e75964cec49808d0e744e25e5eac8f49159517603085ef"),
        ("rangingSetup arguments", "012f6b41e9090940006403e801f400000001"),
        ("rangingSetup Command plaintext", "076955b90a12012f6b41e9090940006403e801f400000001"),
        ("ranging HKDF-Expand info", "4f434b31207577622d737473012f6b41e9090940006403e801f400000001"),
        ("ranging OKM",
            "4518213b2a43b6cc6daf6b88dc89b5e32b2d698b070f0f1d061eda6416117c77bf648fa4b0b3eaba873243eab4d89450"
            + "9600351e5ba49ff291a80007a3f499f2"),
        ("STS key", "4518213b2a43b6cc6daf6b88dc89b5e3"),
        ("STS IV base", "2b2d698b070f0f1d061eda6416117c77"),
        ("frame key", "bf648fa4b0b3eaba873243eab4d894509600351e5ba49ff291a80007a3f499f2"),
        ("STS IV round 1", "2b2d698b070f0f1d061eda6400000004"),
        ("Poll round 1", "012f6b41e9000000019c52fb83cc07c7df"),
        ("Response round 1", "022f6b41e9000000016a34a682d8bda794"),
        ("Final round 1", "032f6b41e9000000010000f0ffffa5e3d103000122640800bbe9d48401d7d0dd"),
    ]
}

final class RangingKnownAnswerTests: XCTestCase {
    func testEveryValueFromTheFormulas() throws {
        let computed = try RangingKAT.values()
        XCTAssertEqual(computed.map(\.0), RangingKAT.expected.map(\.0))
        for ((name, bytes), (_, hex)) in zip(computed, RangingKAT.expected) {
            XCTAssertEqual(bytes.hexString, hex, name)
        }
    }

    /// The ranging key of the example is the one the section 13 handshake derives.
    func testRangingKeyIsTheSection13Key() throws {
        let values = Dictionary(uniqueKeysWithValues: try KAT.values(carSignature: KAT.carSignatureRaw,
                                                                      phoneSignature: KAT.phoneSignatureDER))
        XCTAssertEqual(values["keyRanging"], RangingKAT.rangingKey)
    }

    /// The documented frames open under the documented key, with the documented fields.
    func testDocumentedFramesOpen() throws {
        let expected = Dictionary(uniqueKeysWithValues: RangingKAT.expected)
        let material = RangingMaterial(rangingKey: RangingKAT.rangingKey, setup: RangingKAT.setup)
        let final = try RangingFrame.open(Bytes(testHex: try XCTUnwrap(expected["Final round 1"])), frameKey: material.frameKey)
        XCTAssertEqual(final.type, .final)
        XCTAssertEqual(final.sessionID, 0x2f6b_41e9)
        XCTAssertEqual(final.round, 1)
        XCTAssertEqual(final.timestamps, RangingKAT.stamps)
        let poll = try RangingFrame.open(Bytes(testHex: try XCTUnwrap(expected["Poll round 1"])), frameKey: material.frameKey)
        XCTAssertEqual(poll, .poll(sessionID: 0x2f6b_41e9, round: 1))
    }

    /// The roles emit exactly the documented STS key, IV and Poll for round 1.
    func testTheRolesUseTheDocumentedValues() throws {
        let expected = Dictionary(uniqueKeysWithValues: RangingKAT.expected)
        let material = RangingMaterial(rangingKey: RangingKAT.rangingKey, setup: RangingKAT.setup)
        var initiator = DSTWRInitiator(material: material, txAntennaDelayUnits: 16385, random: SeededRandom("kat"))
        let actions = initiator.startRound()
        XCTAssertEqual(actions.first, .loadSTS(key: Bytes(testHex: try XCTUnwrap(expected["STS key"])),
                                               iv: Bytes(testHex: try XCTUnwrap(expected["STS IV round 1"]))))
        guard case .transmit(let poll, nil, _)? = actions.last else { return XCTFail("\(actions)") }
        XCTAssertEqual(poll.hexString, expected["Poll round 1"])
        var responder = DSTWRResponder(material: material, random: SeededRandom("kat"))
        XCTAssertEqual(responder.startRound().first, actions.first)
    }

    /// The documented capabilities decode back to what they say, and the default board
    /// accepts the documented setup; a car whose module offers only the other values refuses it.
    func testDocumentedCapabilitiesAndTheExampleSetup() throws {
        let expected = Dictionary(uniqueKeysWithValues: RangingKAT.expected)
        let board = try UWBCapabilities.decode(Bytes(testHex: try XCTUnwrap(expected["default board capabilities"])))
        XCTAssertEqual(board, RangingKAT.defaultBoard)
        XCTAssertNoThrow(try board.check(RangingKAT.setup), "the default board accepts the example's setup")
        let answer = try RangingCapabilitiesAnswer.decode(Bytes(testHex: try XCTUnwrap(expected["rangingCapabilities Response plaintext"])))
        XCTAssertEqual(answer.capabilities, board)
        XCTAssertEqual(answer.response.command, .rangingCapabilities)
        XCTAssertEqual(try UWBCapabilities.decode(Bytes(testHex: "01030f0703e80032")), UWBCapabilities())
    }

    func testDocumentShowsTheSameValues() throws {
        let doc = try XCTUnwrap(readRepositoryFile("docs/protocol.md"), "docs/protocol.md missing")
        let blocks = DocumentHexBlocks.blocks(in: doc)
        for (name, hex) in RangingKAT.expected {
            XCTAssertTrue(blocks.contains(hex), "docs/protocol.md lacks \(name)")
        }
    }

    func testPrintExample() throws {
        guard getenv("OCK_PRINT_RANGING_KAT") != nil else { return }
        for (name, bytes) in try RangingKAT.values() {
            print("RANGING-KAT\t\(name)\t\(bytes.count)\t\(bytes.hexString)")
        }
    }
}
