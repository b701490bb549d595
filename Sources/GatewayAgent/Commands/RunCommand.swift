import CommandLineKit

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

extension Command {
    /// `carkey-agent run`: the daemon's main loop (placeholder).
    static let run = Command(
        name: "run",
        summary: "Run the agent (not yet implemented)",
        action: { invocation in
            writeStderr("\(invocation.displayName): not yet implemented\n")
            return 1
        }
    )
}
