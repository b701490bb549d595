// Key vault side: the PKCS#11 bridge's answers as the agent parses them (docs/pkcs11-bridge.md).
// The bridge is a separate process; a bug or a compromised module there must not be able to
// crash the agent or make it read beyond a cap.
import Drivers
import Protocol

enum VaultTargets {
    static let all: [FuzzTarget] = [
        FuzzTarget("pkcs11-bridge-answer", "PKCS11BridgeAnswer.parse on any body: no trap; accepted => 1...8192 bytes, deterministic; a status-1/2 answer with a byte appended or its last byte cut is refused; every result reader on a status-0 payload is bounded (<= 64 handles, values <= 4096 bytes, labels <= 32) or refuses") { input throws(PropertyViolation) in
            guard let answer = try? PKCS11BridgeAnswer.parse(input) else { return false }
            try require((1...PKCS11BridgeFrame.maxBody).contains(input.count), "accepted body within the frame cap")
            try require((try? PKCS11BridgeAnswer.parse(Array(input))) == answer, "parse deterministic")
            switch answer {
            case .ok(let payload):
                if let handles = try? PKCS11BridgeResult.handles(payload) {
                    try require(handles.count <= PKCS11BridgeFrame.maxHandles, "handles bounded")
                }
                if let value = try? PKCS11BridgeResult.value(payload) {
                    try require(value.count <= PKCS11BridgeFrame.maxBytes, "value bounded")
                }
                if let opened = try? PKCS11BridgeResult.opened(payload) {
                    try require(opened.manufacturer.utf8.count <= 32 * 3 && opened.model.utf8.count <= 16 * 3, "labels bounded")
                }
                _ = try? PKCS11BridgeResult.handle(payload)
                _ = try? PKCS11BridgeResult.handlePair(payload)
            case .pkcs11, .bridge:
                try require((try? PKCS11BridgeAnswer.parse(input + [0])) == nil, "a trailing byte is refused")
                try require((try? PKCS11BridgeAnswer.parse(Array(input.dropLast()))) == nil, "a cut answer is refused")
            }
            return true
        },
    ]
}
