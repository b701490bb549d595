// Randomized checks of the JSON parser (seeded, so a failure reproduces): mutations of valid
// documents never crash and either parse or give a typed error inside the input; random trees
// written out as JSON read back equal; random bytes never parse into something from nothing.
import XCTest
@testable import Drivers

final class JSONParserFuzzTests: XCTestCase {
    /// Documents like the ones the car reads: a board file, a config, an MQTT envelope, escapes.
    static let seeds: [String] = [
        #"{"name": "rpi4", "outputs": {"lock": {"chip": "gpiochip0", "line": 17, "activeLow": false}}, "inputs": []}"#,
        #"{"vehicleID": "OCK-SIM-0001", "console": {"baud": 115200, "pin": "4938"}, "proximity": {"unlockMetres": 1.5}}"#,
        #"{"id":"3f2504e0-4f89-11d3-9a0c-0305e82c3301","type":"command","body":"a1b2c3"}"#,
        #"["\u00e9\uD83D\uDE00\n\t\"\\", -0.5e-3, 9223372036854775807, null, true, false, {}, []]"#,
        "{\"nested\": [[[{\"a\": [1, 2, {\"b\": \"caf\u{E9} \u{1F697}\"}]}]]], \"n\": -12.25E+2}",
    ]

    func testMutatedDocumentsParseOrFailWithATypedErrorInside() {
        var generator = SeededGenerator(seed: 0x15_0a_13)
        let limits = JSONLimits(maxInputBytes: 4096, maxDepth: 16, maxStringBytes: 256, maxMembers: 64)
        var parsed = 0, refused = 0
        for round in 0..<20_000 {
            var bytes = Array(Self.seeds[round % Self.seeds.count].utf8)
            for _ in 0..<Int.random(in: 1...4, using: &generator) { mutate(&bytes, using: &generator) }
            do {
                _ = try JSONTree.parse(bytes, limits: limits)
                parsed += 1
            } catch {
                // Typed by the signature; the offset must point into (or just past) the input.
                XCTAssertTrue((0...max(bytes.count, limits.maxInputBytes)).contains(error.offset), "\(error) for \(bytes)")
                if error.kind != .tooLarge { XCTAssertLessThanOrEqual(error.offset, bytes.count, "\(error) for \(bytes)") }
                refused += 1
            }
        }
        // Both outcomes happen, or the mutations are not exercising anything.
        XCTAssertGreaterThan(parsed, 500)
        XCTAssertGreaterThan(refused, 5000)
    }

    func testRandomTreesRoundTrip() throws {
        var generator = SeededGenerator(seed: 0xC0FFEE)
        for _ in 0..<2000 {
            let tree = randomTree(depth: 0, using: &generator)
            let text = Self.write(tree)
            XCTAssertEqual(try JSONTree.parse(Array(text.utf8)), tree, text)
        }
    }

    func testRandomBytesAreRefusedWithoutCrashing() {
        var generator = SeededGenerator(seed: 0xBAD_B17E5)
        var accepted = 0
        for _ in 0..<20_000 {
            let bytes = (0..<Int.random(in: 0...64, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            if (try? JSONTree.parse(bytes)) != nil { accepted += 1 }
        }
        // Only tiny accidental documents (a lone digit amid whitespace) can pass.
        XCTAssertLessThan(accepted, 200)
    }

    // MARK: Helpers

    /// One edit: flip a bit, drop, duplicate, insert a JSON-significant byte, swap, or truncate.
    private func mutate(_ bytes: inout [UInt8], using generator: inout SeededGenerator) {
        let significant: [UInt8] = Array(#"{}[]",:"\u0123456789.eE+-tfn /"#.utf8) + [0x00, 0x1F, 0x7F, 0x80, 0xC3, 0xED, 0xF0, 0xFF]
        guard !bytes.isEmpty else { bytes = [significant.randomElement(using: &generator)!]; return }
        let at = Int.random(in: 0..<bytes.count, using: &generator)
        switch Int.random(in: 0..<7, using: &generator) {
        case 0: bytes[at] ^= 1 << UInt8.random(in: 0...7, using: &generator)
        case 1: bytes.remove(at: at)
        case 2: bytes.insert(bytes[at], at: at)
        case 3: bytes.insert(significant.randomElement(using: &generator)!, at: at)
        case 4:
            let other = Int.random(in: 0..<bytes.count, using: &generator)
            bytes.swapAt(at, other)
        case 5: bytes.removeSubrange(at...)
        default:
            let end = min(bytes.count, at + Int.random(in: 1...12, using: &generator))
            bytes.insert(contentsOf: bytes[at..<end], at: at)
        }
    }

    private func randomTree(depth: Int, using generator: inout SeededGenerator) -> JSONTree {
        let pick = Int.random(in: 0..<(depth >= 4 ? 5 : 7), using: &generator)
        switch pick {
        case 0: return .null
        case 1: return .bool(Bool.random(using: &generator))
        case 2: return .integer(Int64.random(in: .min ... .max, using: &generator))
        case 3:
            // Non-whole Doubles only: whole ones read back as integers by design.
            let value = Double.random(in: -1e6...1e6, using: &generator)
            return value == value.rounded() ? .number(0.5) : .number(value)
        case 4: return .string(randomString(using: &generator))
        case 5: return .array((0..<Int.random(in: 0...4, using: &generator)).map { _ in randomTree(depth: depth + 1, using: &generator) })
        default:
            var fields: [String: JSONTree] = [:]
            for _ in 0..<Int.random(in: 0...4, using: &generator) {
                fields[randomString(using: &generator)] = randomTree(depth: depth + 1, using: &generator)
            }
            return .object(fields)
        }
    }

    private func randomString(using generator: inout SeededGenerator) -> String {
        let alphabet: [Unicode.Scalar] = ["a", "Z", "0", " ", "\"", "\\", "/", "\n", "\t", "\u{0}", "\u{1F}", "\u{7F}",
                                          "é", "€", "\u{FFFF}", "\u{10000}", "🚗", "\u{10FFFF}"]
        var text = ""
        for _ in 0..<Int.random(in: 0...8, using: &generator) { text.unicodeScalars.append(alphabet.randomElement(using: &generator)!) }
        return text
    }

    /// A JSON writer for the test: control characters as \u escapes, astral scalars sometimes
    /// as surrogate-pair escapes, sometimes raw.
    static func write(_ tree: JSONTree) -> String {
        switch tree {
        case .null: return "null"
        case .bool(let value): return value ? "true" : "false"
        case .integer(let value): return String(value)
        case .number(let value): return "\(value)"
        case .string(let text): return quoted(text)
        case .array(let items): return "[" + items.map(write).joined(separator: ", ") + "]"
        case .object(let fields):
            return "{" + fields.keys.sorted().map { quoted($0) + ": " + write(fields[$0]!) }.joined(separator: ",\n ") + "}"
        }
    }

    private static func quoted(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20: out += "\\u" + hex4(scalar.value)
            case _ where scalar.value >= 0x10000 && scalar.value % 2 == 0:
                let offset = scalar.value - 0x10000
                out += "\\u" + hex4(0xD800 + (offset >> 10)) + "\\u" + hex4(0xDC00 + (offset & 0x3FF))
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

    private static func hex4(_ value: UInt32) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 4 - digits.count) + digits
    }
}
