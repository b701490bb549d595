// Start-up warnings about the config file itself (the agent still starts: a readable PIN is a
// weakness to fix, not a reason to leave the car without its agent).
import Drivers

extension AgentConfig {
    func warnings() -> [String] {
        guard servicePIN != nil, let path = sourcePath, let mode = try? Files.mode(of: path), mode & 0o004 != 0 else { return [] }
        return ["config \(path) is readable by every user and holds the service PIN: chmod 600 it (or 640 with a service group)"]
    }
}
