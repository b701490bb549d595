// sim: the outside world of the simulated car (only with --simulate): doors and trunk opening,
// the lock switch moved by a mechanical key, the pairing button, a broken feedback wire. The
// agent sees these through its normal input sampling and debouncing, as on a real car.
import Drivers

final class SimulationCommands: ConsoleCommandGroup {
    private let chip: SimulatedGPIO

    init(chip: SimulatedGPIO) {
        self.chip = chip
    }

    let help: [(usage: String, summary: String)] = [
        ("sim door|trunk open|closed", "simulated door or trunk switch"),
        ("sim lockswitch locked|unlocked", "simulated lock-state switch (a mechanical key)"),
        ("sim button press|release", "simulated pairing button (hold 5 s to pair)"),
        ("sim handle pull|release", "simulated door-handle switch (passive entry)"),
        ("sim feedback ok|broken", "break the simulated lock-state wire (pulses then mismatch)"),
    ]
    let verbs: Set<String> = ["sim"]

    func run(_ words: [String]) -> [String] {
        let usage = "sim door|trunk open|closed, sim lockswitch locked|unlocked, sim button press|release, "
            + "sim handle pull|release, sim feedback ok|broken"
        guard words.count == 3 else { return ConsoleText.usage(usage) }
        let (what, value) = (words[1], words[2])
        switch (what, value) {
        case ("door", "open"), ("door", "closed"):
            return set(.doorOpen, active: value == "open", "door \(value)")
        case ("trunk", "open"), ("trunk", "closed"):
            return set(.trunkOpen, active: value == "open", "trunk \(value)")
        case ("lockswitch", "locked"), ("lockswitch", "unlocked"):
            return set(.lockState, active: value == "locked", "lock switch \(value)")
        case ("button", "press"), ("button", "release"):
            return set(.pairingButton, active: value == "press", "pairing button \(value == "press" ? "pressed" : "released")")
        case ("handle", "pull"), ("handle", "release"):
            return set(.doorHandle, active: value == "pull", "door handle \(value == "pull" ? "pulled" : "released")")
        case ("feedback", "ok"), ("feedback", "broken"):
            chip.setFeedbackBroken(value == "broken")
            return ["sim: lock-state feedback wire \(value)"]
        default:
            return ConsoleText.usage(usage)
        }
    }

    private func set(_ role: InputRole, active: Bool, _ description: String) -> [String] {
        guard chip.setInput(role: role.rawValue, active: active) else { return ["error: the board has no \(role.rawValue) input"] }
        return ["sim: \(description)"]
    }
}
