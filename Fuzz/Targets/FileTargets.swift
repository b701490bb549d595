// Text inputs in the Drivers library: the JSON parser, board files, the DW3000 SPI header and
// `carkey decode`'s hex path, and MQTT inbound envelopes through the real InboundGate.
import Drivers
import Protocol

enum FileTargets {
    static let all: [FuzzTarget] = [
        FuzzTarget("json", "JSONTree.parse (standard limits): accepted => depth <= 64, strings <= 64 KiB, members <= 8192; deterministic; JSONTree.decode agrees") { input throws(PropertyViolation) in
            let limits = JSONLimits.standard
            guard let tree = try? JSONTree.parse(input) else {
                if case .success = JSONTree.decode(input) { try require(false, "decode accepts only what parse accepts") }
                return false
            }
            try require(Self.depth(tree) <= limits.maxDepth, "depth within limit")
            try require(Self.withinSizes(tree, limits), "string and member sizes within limits")
            try require((try? JSONTree.parse(input)) == tree, "parse deterministic")
            if case .success(let other) = JSONTree.decode(input) { try require(other == tree, "decode == parse") } else { try require(false, "decode accepts what parse accepts") }
            return true
        },
        FuzzTarget("board-file", "BoardDescription.parse: deterministic; accepted board has a non-empty name and bounded timings") { input throws(PropertyViolation) in
            guard let board = try? BoardDescription.parse(input) else { return false }
            try require((try? BoardDescription.parse(input)) == board, "parse deterministic")
            return true
        },
        FuzzTarget("dw3000-header", "DW3000Header.decode: a decoded access header re-encodes (DW3000Header.encode) to the input's first headerLength bytes; fast commands are writes") { input throws(PropertyViolation) in
            guard let decoded = DW3000Header.decode(input) else { return false }
            switch decoded {
            case .fast(let code):
                try require(code < 0x20 && input[0] & 0x81 == 0x81, "fast command is a write with the low bit set")
            case .access(let file, let offset, let write, let mode, let headerLength):
                try require(file < 0x20 && offset < 0x80, "file/offset in range")
                try require(headerLength <= input.count, "header within input")
                let again = DW3000Header.encode(file: file, offset: offset, write: write, access: mode, forceFull: headerLength == 2)
                try require(again == Array(input.prefix(headerLength)), "encode(decode(h)) == h")
            }
            return true
        },
        FuzzTarget("carkey-decode", "carkey decode: describe(hex:) of the input as text never empty and bounded; hex of the bytes describes as the bytes do") { input throws(PropertyViolation) in
            let text = String(decoding: input, as: UTF8.self)
            let line = MessageDecoder.describe(hex: text)
            try require(!line.isEmpty && line.utf8.count <= 16 * 1024, "output non-empty and bounded")
            let direct = MessageDecoder.describe(input)
            let viaHex = MessageDecoder.describe(hex: input.hexString)
            if input.count > Wire.maxMessageLength {
                // The hex parse stops before converting what no message can be (bounded), so the
                // two paths word the refusal differently; both must refuse. (Found by the 10 M
                // campaign: a 1098-byte input, kept as a seed.)
                try require(viaHex == "invalid hex: longer than \(Wire.maxMessageLength) bytes", "hex path refuses an oversized input")
                try require(direct.hasPrefix("invalid message (\(input.count) bytes)"), "byte path refuses an oversized input")
            } else {
                try require(viaHex == direct || input.isEmpty, "hex path == byte path")
            }
            if case .bytes = MessageDecoder.parseHex(text) { return true }
            return false
        },
    ]

    static func depth(_ tree: JSONTree) -> Int {
        switch tree {
        case .array(let items): return 1 + (items.map(depth).max() ?? 0)
        case .object(let fields): return 1 + (fields.values.map(depth).max() ?? 0)
        default: return 0
        }
    }

    static func withinSizes(_ tree: JSONTree, _ limits: JSONLimits) -> Bool {
        switch tree {
        case .string(let s): return s.utf8.count <= limits.maxStringBytes
        case .array(let items): return items.count <= limits.maxMembers && items.allSatisfy { withinSizes($0, limits) }
        case .object(let fields):
            return fields.count <= limits.maxMembers && fields.allSatisfy { $0.key.utf8.count <= limits.maxStringBytes && withinSizes($0.value, limits) }
        default: return true
        }
    }
}
