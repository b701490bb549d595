// sim: the outside world of the simulated car (only with --simulate): doors and trunk opening,
// the lock switch moved by a mechanical key, the pairing button, a broken feedback wire. The
// agent sees these through its normal input sampling and debouncing, as on a real car.
import Drivers

final class SimulationCommands: ConsoleCommandGroup {
    private let chip: SimulatedGPIO
    /// The simulated UWB module (--simulate-uwb): where the phone is, what an attacker does.
    private let uwb: SimulatedUWBRadio?

    init(chip: SimulatedGPIO, uwb: SimulatedUWBRadio? = nil) {
        self.chip = chip
        self.uwb = uwb
    }

    let help: [(usage: String, summary: String)] = [
        ("sim door|trunk open|closed", "simulated door or trunk switch"),
        ("sim lockswitch locked|unlocked", "simulated lock-state switch (a mechanical key)"),
        ("sim button press|release", "simulated pairing button (hold 5 s to pair)"),
        ("sim handle pull|release", "simulated door-handle switch (passive entry)"),
        ("sim feedback ok|broken", "break the simulated lock-state wire (pulses then mismatch)"),
        ("sim uwb place METRES", "--simulate-uwb: the phone stands this far from the car"),
        ("sim uwb walk FROM TO SPEED", "--simulate-uwb: the phone walks from FROM to TO metres at SPEED m/s, starting now"),
        ("sim uwb relay on [METRES]|off", "--simulate-uwb: a relay (frames travel METRES, default 30) between phone and car"),
        ("sim uwb reduce on [P] [METRES]|off", "--simulate-uwb: ghost-peak attack: with probability P (default 0.3) a frame is read METRES (default 5) early"),
    ]
    let verbs: Set<String> = ["sim"]

    func run(_ words: [String]) -> [String] {
        if words.count >= 2, words[1] == "uwb" { return simulateUWB(Array(words.dropFirst(2))) }
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

    private func simulateUWB(_ words: [String]) -> [String] {
        let usage = "sim uwb place METRES | walk FROM TO SPEED | relay on [METRES]|off | reduce on [P] [METRES]|off"
        guard let uwb else { return ["error: the agent runs without --simulate-uwb"] }
        let numbers = words.dropFirst().map { Double($0) }
        guard !numbers.contains(where: { $0 == nil || !$0!.isFinite }) || words.first == "relay" || words.first == "reduce" else {
            return ConsoleText.usage(usage)
        }
        switch (words.first, words.count) {
        case ("place", 2):
            guard let metres = numbers[0], (0...200).contains(metres) else { return ConsoleText.usage(usage) }
            uwb.distance = .fixed(metres: metres)
            return ["sim: phone at \(UWBCommands.metres(metres)) from the car"]
        case ("walk", 4):
            guard let from = numbers[0], let to = numbers[1], let speed = numbers[2], (0...200).contains(from),
                  (0...200).contains(to), speed > 0, speed <= 10 else { return ConsoleText.usage(usage) }
            let start = uwb.nowSeconds
            uwb.distance = .waypoints([.init(seconds: start, metres: from), .init(seconds: start + abs(to - from) / speed, metres: to)])
            return ["sim: phone walks from \(UWBCommands.metres(from)) to \(UWBCommands.metres(to)) at \(speed) m/s"]
        case ("relay", _), ("reduce", _):
            return attack(words, usage: usage, on: uwb)
        default:
            return ConsoleText.usage(usage)
        }
    }

    private func attack(_ words: [String], usage: String, on uwb: SimulatedUWBRadio) -> [String] {
        let isRelay = words[0] == "relay"
        var others = uwb.attacks.filter { attack in
            if case .relay = attack { return !isRelay } else { return isRelay }
        }
        guard words.count >= 2 else { return ConsoleText.usage(usage) }
        switch words[1] {
        case "off" where words.count == 2:
            uwb.attacks = others
            return ["sim: \(isRelay ? "relay" : "distance-reduction attack") off"]
        case "on":
            let values = words.dropFirst(2).map { Double($0) }
            guard !values.contains(where: { $0 == nil || !$0!.isFinite || $0! < 0 }) else { return ConsoleText.usage(usage) }
            if isRelay {
                guard values.count <= 1 else { return ConsoleText.usage(usage) }
                let path = values.first.flatMap { $0 } ?? 30
                others.append(.relay(pathMetres: path, processingNanos: 100))
                uwb.attacks = others
                return ["sim: relay on: frames travel \(UWBCommands.metres(path)) through the attackers"]
            }
            guard values.count <= 2 else { return ConsoleText.usage(usage) }
            let probability = values.first.flatMap { $0 } ?? 0.3
            let metres = values.count > 1 ? values[1]! : 5
            guard probability <= 1 else { return ConsoleText.usage(usage) }
            others.append(.earlyDetection(successProbability: probability, advanceMetres: metres))
            uwb.attacks = others
            return ["sim: distance-reduction attack on: \(Int(probability * 100)) % of frames read \(UWBCommands.metres(metres)) early"]
        default:
            return ConsoleText.usage(usage)
        }
    }

    private func set(_ role: InputRole, active: Bool, _ description: String) -> [String] {
        guard chip.setInput(role: role.rawValue, active: active) else { return ["error: the board has no \(role.rawValue) input"] }
        return ["sim: \(description)"]
    }
}
