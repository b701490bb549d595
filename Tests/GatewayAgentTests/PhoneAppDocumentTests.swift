// docs/phone-app.md must not drift from the code: its reference table is computed here from
// the constants and encoders the car uses, every number in its text must be one of that
// table's (or a section of protocol.md or of the guide itself), its byte examples are made
// again with the car's framing code, and its list of conformance rules is ConformanceRule's.
import XCTest
import Drivers
@testable import Protocol
@testable import carkey_agent

final class PhoneAppDocumentTests: XCTestCase {
    private static func repositoryFile(_ path: String) throws -> String {
        var parts = String(#filePath).split(separator: "/", omittingEmptySubsequences: false)
        parts.removeLast(3)
        return String(decoding: try Files.read(parts.joined(separator: "/") + "/" + path, limit: 1 << 20), as: UTF8.self)
    }

    /// Every row of the reference table, computed from the code.
    private static func expectedValues() throws -> [String: String] {
        let car = CarProtocolConfiguration(vehicleID: try VehicleID("A"))
        let phone = PhoneConfiguration(longTermKey: try P256PrivateKey.generate(), carIdentityKey: try P256PrivateKey.generate().publicKey,
                                       vehicleID: try VehicleID("A"))
        let link = LinkSettings()
        let proximity = ProximityConfiguration()
        let uwb = UWBCapabilities()
        let budget = car.handshakeBudgetPerPeer
        let rate = car.rateLimit
        let mtu = Int(ATTClientConnection().clientMTU)
        let attHeader = ATTServerConnection.minimumMTU - MessageFragmenter.minimumFragmentSize
        func bytes(_ n: Int) -> String { "\(n) bytes" }
        func seconds(_ millis: UInt64) -> String { "\(millis / 1000) s" }
        func minutes(_ millis: UInt64) -> String { "\(millis / 60_000) min" }
        func type(_ t: MessageType) -> String { "0x" + [t.rawValue].hexString }
        func command(_ c: CommandCode) -> String { "0x" + [c.rawValue].hexString }
        func range<T>(_ r: ClosedRange<T>, _ unit: String = "") -> String { "\(r.lowerBound) to \(r.upperBound)\(unit)" }
        func either(_ values: [UInt8]) -> String {
            values.dropLast().map(String.init).joined(separator: ", ") + " or \(values.last!)"
        }
        // A challenge with a one-byte vehicle ID, to learn the fixed part of its length.
        let challenge = try ChallengeMessage(challenge: Bytes(repeating: 1, count: Wire.challengeLength),
                                             carEphemeralPublicKey: try P256PrivateKey.generate().publicKey.sec1,
                                             vehicleID: try VehicleID("A"), signature: Bytes(repeating: 2, count: Wire.rawSignatureLength))
        let pairingChallengeFixed = 2 + Wire.challengeLength + PairingWire.windowIDLength + Wire.publicKeyLength + 1
            + Wire.publicKeyLength + 32 + Wire.rawSignatureLength
        return [
            "ble.service": KeyServiceUUIDs.service.description,
            "ble.phoneToCar": "\(KeyServiceUUIDs.phoneToCar)",
            "ble.carToPhone": "\(KeyServiceUUIDs.carToPhone)",
            "ble.cccd": GATTUUIDs.clientCharacteristicConfiguration.description,
            "ble.handlePhoneToCar": String(format: GATTDatabase.CarHandles.phoneToCar),
            "ble.handleCarToPhone": String(format: GATTDatabase.CarHandles.carToPhone),
            "ble.companyID": String(format: CarAdvertisement.companyID),
            "ble.identifier": bytes(CarAdvertisement.identifierLength),
            "ble.prand": bytes(AdvertisingIdentifier.prandLength),
            "ble.hash": bytes(AdvertisingIdentifier.hashLength),
            "ble.rotation": minutes(AdvertisingIdentifierRotation.defaultIntervalMillis),
            "ble.rotationRange": "\(LinkSettings.rotationRange.lowerBound) to \(LinkSettings.rotationRange.upperBound) min",
            "ble.mtu": "\(mtu)",
            "ble.mtuMinimum": "\(ATTServerConnection.minimumMTU)",
            "ble.attHeader": bytes(attHeader),
            "ble.startOverhead": bytes(FragmentHeader.startOverhead),
            "ble.fragmentAt247": bytes(mtu - attHeader),
            "ble.fragmentMinimum": bytes(MessageFragmenter.minimumFragmentSize),
            "ble.queued": "\(ATTServerConnection.maxQueuedMessages) messages",
            "ble.maxLinks": "\(link.maxLinks)",
            "time.idle": "\(link.idleTimeoutSeconds) s",
            "sim.header": bytes(LinkFraming.headerLength),
            "sim.maxLinks": "\(SimulatedLinkServer.Configuration(socketPath: "x").maxConnections)",
            "message.max": bytes(Wire.maxMessageLength),
            "version": "0x" + [Wire.version].hexString,
            "version.pairing": "0x" + [PairingWire.version].hexString,
            "type.hello": type(.hello), "type.challenge": type(.challenge), "type.sessionAccepted": type(.sessionAccepted),
            "type.command": type(.command), "type.response": type(.response), "type.fault": type(.fault),
            "type.authResponse": AuthResponseMessage.header.map { "0x" + [$0].hexString }.joined(separator: " "),
            "type.pairingHello": type(.pairingHello), "type.pairingChallenge": type(.pairingChallenge),
            "type.pairingProof": type(.pairingProof), "type.pairingResult": type(.pairingResult),
            "type.grant": type(.advertisingKeyGrant),
            "cmd.userVerified": command(.userVerified), "cmd.revoke": command(.revoke), "cmd.rangingSetup": command(.rangingSetup),
            "size.hello": "\(HelloMessage.fixedLength) bytes + certificate",
            "size.challenge": "\(challenge.encoded().count - 1) bytes + vehicle ID",
            "size.authResponse": "\(AuthResponseMessage.fixedLength + Wire.minDERSignatureLength) to "
                + "\(AuthResponseMessage.fixedLength + Wire.maxDERSignatureLength) bytes",
            "size.recordOverhead": bytes(EncryptedRecord.minLength),
            "size.sessionAccepted": bytes(SessionAcceptedBody.length),
            "size.command": "\(CommandBody.fixedLength) bytes + arguments",
            "size.response": bytes(ResponseBody.length),
            "size.certificate": "\(ShareCertificate.fixedBodyLength + Wire.rawSignatureLength) bytes + vehicle ID",
            "size.certificateMax": bytes(ShareCertificate.maxLength),
            "size.pairingHello": bytes(PairingHelloMessage.length),
            "size.pairingChallenge": "\(pairingChallengeFixed) bytes + vehicle ID",
            "size.pairingProof": bytes(PairingProofMessage.length),
            "size.pairingResult": bytes(PairingResultMessage.length),
            "size.grant": bytes(AdvertisingKeyGrantMessage.length),
            "size.rangingSetup": bytes(RangingSetup.encodedLength),
            "key.public": bytes(Wire.publicKeyLength),
            "key.id": bytes(KeyID.length),
            "challenge": bytes(Wire.challengeLength),
            "signedData": bytes(AuthResponseMessage.signedData(challenge: Bytes(repeating: 0, count: Wire.challengeLength), timestamp: 0).count),
            "signature.raw": bytes(Wire.rawSignatureLength),
            "signature.der": "\(Wire.minDERSignatureLength) to \(Wire.maxDERSignatureLength) bytes",
            "vehicleID": "1 to \(VehicleID.maxLength) bytes",
            "advertisingKey": bytes(AdvertisingKey.length),
            "time.handshakeDeadline": "\(link.handshakeDeadlineSeconds) s",
            "time.challengeLifetime": seconds(car.challengeLifetimeMillis),
            "time.timestampTolerance": "\(car.timestampToleranceSeconds) s",
            "time.sessionLifetime": "\(car.sessionLifetimeSeconds) s",
            "time.commandLifetimeMax": "\(car.maxCommandLifetimeSeconds) s",
            "time.commandLifetimePhone": "\(phone.commandLifetimeSeconds) s",
            "time.pairingWindow": seconds(car.pairing.windowMillis),
            "pairing.code": "\(PairingCode.digitCount) digits",
            "pairing.guesses": "\(car.pairing.maxWrongCodes)",
            "pairing.iterations": "\(PairingSPAKE.pbkdfIterations)",
            "keys.slots": "\(Keychain.defaultCapacity)",
            "retry.rate": "\(budget.perSecond) a second",
            "retry.burst": "\(budget.burst)",
            "rate.failures": "\(rate.failureThreshold)",
            "rate.window": seconds(rate.windowMillis),
            "rate.block": seconds(rate.basePenaltyMillis),
            "rate.maxBlock": minutes(rate.maxPenaltyMillis),
            "counter.sessionAccepted": "0",
            "counter.firstCommand": "1",
            "counter.limit": car.maxRecordCounter == 1 << 32 ? "2^32" : "\(car.maxRecordCounter)",
            "uwb.channels": either(RangingSetup.channels),
            "uwb.preamble": range(RangingSetup.preambleCodes),
            "uwb.sts": either(RangingSetup.stsLengths),
            "uwb.interval": range(RangingSetup.roundIntervals, " ms"),
            "uwb.replyDelay": range(RangingSetup.replyDelays, " µs"),
            "uwb.replyDelayCar": "\(uwb.minReplyDelayMicros) µs",
            "uwb.jitter": range(RangingSetup.replyJitters, " µs"),
            "uwb.setups": "\(CarRangingPolicy.maxSetupsPerSession)",
            "uwb.unlockZone": "\(proximity.unlockMetres) m",
            "uwb.rounds": "\(proximity.requiredConsecutiveValidRounds)",
            "uwb.fresh": "\(proximity.authorizationFreshMillis) ms",
        ]
    }

    /// The reference table: ID to value, as the document has it.
    private static func referenceTable(_ doc: String) throws -> [String: String] {
        let section = try XCTUnwrap(doc.range(of: "\n## Reference values\n")).upperBound
        var rows: [String: String] = [:]
        for line in doc[section...].split(separator: "\n") where line.hasPrefix("| `") {
            let cells = Self.cells(String(line))
            XCTAssertEqual(cells.count, 3, String(line))
            let id = cells[0].trimmingCharacters(in: ["`"])
            XCTAssertNil(rows[id], "\(id) twice")
            rows[id] = cells[1]
        }
        return rows
    }

    private static func cells(_ line: String) -> [String] {
        // "\|" inside a cell is a literal bar.
        let marked = line.replacingOccurrences(of: "\\|", with: "\u{1}")
        return marked.split(separator: "|").map {
            $0.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: "\u{1}", with: "|")
        }
    }

    func testTheReferenceTableIsTheCode() throws {
        let doc = try Self.repositoryFile("docs/phone-app.md")
        let table = try Self.referenceTable(doc)
        let expected = try Self.expectedValues()
        XCTAssertEqual(Set(table.keys), Set(expected.keys), "rows missing or unknown")
        XCTAssertEqual(CarAdvertisement.keyServiceUUID.description, KeyServiceUUIDs.service.description, "advertised = served")
        for (id, value) in expected.sorted(by: { $0.key < $1.key }) {
            XCTAssertEqual(table[id], value, "docs/phone-app.md reference value \(id)")
        }
        // Each value is mentioned in the text by its ID, so a reader can find where it applies.
        let text = try XCTUnwrap(doc.components(separatedBy: "\n## Reference values\n").first)
        for id in expected.keys {
            XCTAssertTrue(text.contains(id), "\(id) is in the table but never used in the text")
        }
    }

    /// Numbers outside the reference table must be values of it, sections of protocol.md (§N),
    /// sections of this guide ("section N"), ordinals of a list or heading, or the platform
    /// versions named below. So a value that changes in the code cannot survive in the text.
    func testEveryNumberInTheTextIsAReferenceValue() throws {
        let doc = try Self.repositoryFile("docs/phone-app.md")
        let protocolDoc = try Self.repositoryFile("docs/protocol.md")
        let table = try Self.referenceTable(doc)
        let known = Set(table.values.flatMap { Self.numbers(in: $0).map(\.token) })
        var knownWithUnit: Set<String> = []
        for value in table.values {
            let numbers = Self.numbers(in: value)
            // "50 to 1000 ms": the last number's unit applies to every number of the value.
            guard let unit = numbers.last?.unit else { continue }
            for number in numbers { knownWithUnit.insert("\(number.token) \(unit)") }
        }
        let hexKnown = Set(table.values.flatMap { Self.hexTokens(in: $0) })
        let protocolSections = Set(protocolDoc.split(separator: "\n").compactMap { line -> String? in
            guard line.hasPrefix("## ") || line.hasPrefix("### ") else { return nil }
            let word = line.split(separator: " ")[1]
            guard let first = word.first, first.isNumber else { return nil }
            return String(word.hasSuffix(".") ? word.dropLast() : word)
        })
        XCTAssertTrue(protocolSections.isSuperset(of: ["2", "16", "18.12", "19.9"]))
        let guideSections = Set(doc.split(separator: "\n").compactMap { line -> String? in
            guard line.hasPrefix("## "), let word = line.split(separator: " ").dropFirst().first, word.hasSuffix(".") else { return nil }
            return String(word.dropLast())
        })
        // Facts about the platforms, not values of this protocol.
        let platformFacts = ["Android 12", "Android 14", "API\nlevel 31", "API level 31", "RFC 9383"]

        var text = try XCTUnwrap(doc.components(separatedBy: "\n## Reference values\n").first)
        // The rules table is ConformanceRule's (checked below), fenced blocks are examples.
        text = text.split(separator: "\n", omittingEmptySubsequences: false)
            .filter { line in !ConformanceRule.allCases.contains { line.hasPrefix("| `\($0.id)` |") } }
            .joined(separator: "\n")
        text = Self.removingFencedBlocks(text)
        for rule in ConformanceRule.allCases { text = text.replacingOccurrences(of: "`\(rule.id)`", with: "") }
        for fact in platformFacts { text = text.replacingOccurrences(of: fact, with: "") }

        var unknown: [String] = []
        for hex in Self.hexTokens(in: text) where !hexKnown.contains(hex) { unknown.append(hex) }
        for (token, before, unit) in Self.numbers(in: text) {
            if before.hasSuffix("§") {
                if !protocolSections.contains(token) { unknown.append("§" + token + " (no such section in protocol.md)") }
                continue
            }
            if before.hasSuffix("section ") {
                if !guideSections.contains(token) { unknown.append("section " + token + " (no such section here)") }
                continue
            }
            if before.hasSuffix("\n") || before.hasSuffix("## ") || before.isEmpty {
                continue // an ordinal at the start of a line or heading
            }
            if let unit {
                if !knownWithUnit.contains("\(token) \(unit)") { unknown.append("\(token) \(unit) after '\(before.suffix(30))'") }
            } else if !known.contains(token) {
                unknown.append(token + " after '" + before.suffix(30) + "'")
            }
        }
        XCTAssertEqual(unknown, [], "numbers in docs/phone-app.md that are not reference values")
    }

    func testTheByteExamplesAreTheCarsFraming() throws {
        let doc = try Self.repositoryFile("docs/phone-app.md")
        let blocks = Set(Self.fencedBlocks(doc).flatMap { $0.split(separator: "\n").map(String.init) })
        let fault = FaultMessage(.unknownKey).encoded()
        let fragment = try XCTUnwrap(try MessageFragmenter.fragments(of: fault, maxFragment: 244).first)
        let examples = [
            try LinkFraming.frame(fault),
            fragment,
            ATTPDU.writeCommand(handle: GATTDatabase.CarHandles.phoneToCar, value: fragment),
            ATTPDU.notification(handle: GATTDatabase.CarHandles.carToPhone, value: fragment),
        ]
        for bytes in examples { XCTAssertTrue(blocks.contains(bytes.hexString), "\(bytes.hexString) is not in docs/phone-app.md") }
    }

    func testTheRulesTableIsConformanceRule() throws {
        let doc = try Self.repositoryFile("docs/phone-app.md")
        for rule in ConformanceRule.allCases {
            let title = rule.title.replacingOccurrences(of: "||", with: "\\|\\|")
            let row = "| `\(rule.id)` | \(rule.reference) | \(title) | \(rule.kind.rawValue) |"
            XCTAssertTrue(doc.contains(row + "\n"), "docs/phone-app.md lacks the row: \(row)")
        }
        let rows = doc.split(separator: "\n").filter { line in
            line.hasPrefix("| `") && line.hasSuffix(" | phone |") || line.hasSuffix(" | key |") || line.hasSuffix(" | car |")
        }
        XCTAssertEqual(rows.count, ConformanceRule.allCases.count, "a row for a rule the code does not have")
        XCTAssertTrue(doc.contains("`carkey-agent run --conformance`"))
    }

    // MARK: Reading the text

    private static func removingFencedBlocks(_ text: String) -> String {
        var out: [Substring] = []
        var inside = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("```") { inside.toggle(); continue }
            if !inside { out.append(line) }
        }
        return out.joined(separator: "\n")
    }

    private static func fencedBlocks(_ text: String) -> [String] {
        var blocks: [String] = []
        var current: [Substring]?
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("```") {
                if let lines = current { blocks.append(lines.joined(separator: "\n")); current = nil } else { current = [] }
            } else {
                current?.append(line)
            }
        }
        return blocks
    }

    /// `0x..` tokens, lower-cased.
    private static func hexTokens(in text: String) -> [String] {
        let chars = Array(text)
        var tokens: [String] = []
        var index = 0
        while index + 2 < chars.count {
            if chars[index] == "0", chars[index + 1] == "x", chars[index + 2].isHexDigit,
               index == 0 || !(chars[index - 1].isLetter || chars[index - 1].isNumber) {
                var end = index + 2
                while end < chars.count, chars[end].isHexDigit { end += 1 }
                tokens.append(String(chars[index..<end]).lowercased())
                index = end
            } else {
                index += 1
            }
        }
        return tokens
    }

    /// Decimal numbers (with a decimal point where one follows) that stand on their own, each
    /// with up to 30 characters before it. Digits inside a word or an identifier (P-256,
    /// SHA256, link#3, 16-framing, 0x10) are not numbers; "64-byte" is.
    private static let units = ["ms", "s", "min", "bytes", "µs", "m", "digits", "messages"]

    private static func numbers(in text: String) -> [(token: String, before: String, unit: String?)] {
        let chars = Array(text)
        var found: [(String, String, String?)] = []
        var index = 0
        while index < chars.count {
            guard chars[index].isNumber, chars[index].isASCII else { index += 1; continue }
            var end = index
            while end < chars.count, chars[end].isASCII, chars[end].isNumber || (chars[end] == "." && end + 1 < chars.count
                                                                                    && chars[end + 1].isNumber) { end += 1 }
            let previous: Character? = index > 0 ? chars[index - 1] : nil
            let next: Character? = end < chars.count ? chars[end] : nil
            let afterHyphen = next == "-" ? String(chars[(end + 1)..<min(chars.count, end + 5)]) : ""
            let embedded = previous.map { $0.isLetter || $0 == "-" || $0 == "_" || $0 == "#" || $0 == "x" || $0 == "^" } ?? false
                || next.map { $0.isLetter || $0 == "_" } ?? false
                || (next == "-" && afterHyphen != "byte")
            if !embedded {
                // The unit right after it: "10 s", "64-byte" (as "bytes").
                var unit: String?
                if next == "-" { unit = "bytes" } else if next == " " {
                    let word = String(chars[(end + 1)...].prefix { $0.isLetter })
                    if word == "byte" { unit = "bytes" } else if units.contains(word) { unit = word }
                }
                found.append((String(chars[index..<end]), String(chars[max(0, index - 30)..<index]), unit))
            }
            index = end
        }
        return found
    }
}

private extension String {
    /// "0x000c" for a handle or company ID.
    init(format value: UInt16) {
        self = "0x" + [UInt8(value >> 8), UInt8(value & 0xFF)].hexString
    }
}
