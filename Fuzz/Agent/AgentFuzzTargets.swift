// Agent-side targets: the config file parser and the serial console's line handling, which
// live in the carkey-agent executable module. GatewayAgentTests compiles this file through a
// symlink (@testable import); scripts/fuzz/build-agent.sh compiles it into the agent module.
#if !CARKEY_FUZZ_AGENT_MODULE
@testable import carkey_agent
#endif
import Drivers
import FuzzTargets
import Protocol

enum AgentFuzzTargets {
    static let all: [FuzzTarget] = [
        FuzzTarget("agent-config", "AgentConfig.parse: deterministic; accepted => the file is <= AgentConfig.maxFileBytes; the JSON re-encoded by ConfigFileEncoding parses to the same config") { input throws(PropertyViolation) in
            guard let config = try? AgentConfig.parse(input, baseDirectory: "/nonexistent-fuzz") else { return false }
            try require(input.count <= AgentConfig.maxFileBytes, "config within maxFileBytes")
            if let tree = try? JSONTree.parse(input) {
                let again = ConfigFileEncoding.encode(tree)
                try require((try? JSONTree.parse(again)) == tree, "ConfigFileEncoding round trip")
                try require((try? AgentConfig.parse(again, baseDirectory: "/nonexistent-fuzz")) != nil, "re-encoded config still accepted")
            } else {
                try require(false, "an accepted config is valid JSON")
            }
            _ = config
            return true
        },
        FuzzTarget("agent-console", "LineAssembler + ConsoleCommands.answer: lines <= maxLineBytes input bytes (<= 3x as UTF-8), answers bounded (<= 64 lines of <= 512 bytes), errors quote printable ASCII only") { input throws(PropertyViolation) in
            var assembler = LineAssembler()
            let commands = ConsoleCommands(groups: [EchoGroup()])
            var any = false
            for event in assembler.feed(input) {
                guard case .line(let line) = event else { continue }
                any = true
                // Bytes that are not UTF-8 become U+FFFD (3 bytes each), so the String may be up
                // to 3x the raw line (first campaign: the 1x bound was this target's own bug).
                try require(line.utf8.count <= 3 * assembler.maxLineBytes, "line within 3 x maxLineBytes")
                let answer = commands.answer(line)
                try require(answer.count <= 64, "answer bounded")
                for out in answer {
                    try require(out.utf8.count <= 512, "answer line bounded")
                    if out.hasPrefix("error: unknown") { try require(out.unicodeScalars.allSatisfy { $0.value >= 0x20 && $0.value < 0x7F }, "error lines printable") }
                }
                _ = ConsoleCommands.masksSecret(Array(line.utf8))
            }
            try require(assembler.pendingByteCount <= assembler.maxLineBytes, "pending bounded")
            return any
        },
    ]

    /// A stand-in group: the dispatcher and word limits are what is fuzzed, not the verbs.
    /// Its answer starts with "echo:" so it can never pass for the dispatcher's own error line
    /// (the 10 M campaign found `echo error: unknown<U+FFFD>` echoed back and taken for one).
    final class EchoGroup: ConsoleCommandGroup {
        let help: [(usage: String, summary: String)] = [("echo WORD...", "says the words back")]
        let verbs: Set<String> = ["echo"]
        func run(_ words: [String]) -> [String] { ["echo: " + words.dropFirst().joined(separator: " ")] }
    }
}
