// Enrolls load-generator phones the only way an owner key gets onto a car: the agent opens its
// pairing window (control socket "pair", as `carkey-agent pair` does) and the phone runs the
// pairing exchange (PhonePairingSession) over the simulated link, then pins the car it proved.
import Drivers
import Protocol

public enum LoadEnrollment {
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// Enrolls `count` fresh owner keys one after another; returns their phone configurations.
    public static func enrollOwners(count: Int, stateDirectory: String, timeoutMillis: UInt64 = 10_000) throws -> [PhoneConfiguration] {
        try (0..<count).map { _ in try enrollOwner(try P256PrivateKey.generate(), stateDirectory: stateDirectory, timeoutMillis: timeoutMillis) }
    }

    public static func enrollOwner(_ key: P256PrivateKey, stateDirectory: String, timeoutMillis: UInt64 = 10_000) throws -> PhoneConfiguration {
        let lines = try AgentControl.request("pair", socketPath: stateDirectory + "/control.sock")
        // "code NNNNNN expires-in SECONDS"
        let words = lines.first?.split(separator: " ").map(String.init) ?? []
        guard words.count >= 2, words[0] == "code" else { throw Failure(description: "unexpected pair answer") }
        var session = PhonePairingSession(longTermKey: key, code: try PairingCode(words[1]))
        let link = try SimulatedLinkClient(socketPath: stateDirectory + "/ble.sock", timeoutMillis: timeoutMillis)
        try link.send(try session.start())
        while true {
            switch try session.receive(try link.receive()) {
            case .send(let proof): try link.send(proof)
            case .paired(let paired): return PhoneConfiguration(longTermKey: key, paired: paired)
            case .refused(let code): throw Failure(description: "pairing refused with fault \(code)")
            }
        }
    }
}
