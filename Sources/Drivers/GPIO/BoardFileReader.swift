// Hand-written validation of the board-file tree, so each error carries the dotted key path.

enum BoardFileReader {
    static let topLevelKeys: Set<String> = [
        "name", "description", "pulseWidthMillis", "debounceMillis", "pairingHoldMillis",
        "feedbackSettleMillis", "outputs", "inputs", "uwb",
    ]
    static let outputKeys: Set<String> = ["chip", "line", "activeLow", "bias", "drive", "description"]
    // Drive is an output property: accepting it on an input would suggest it does something.
    static let inputKeys: Set<String> = ["chip", "line", "activeLow", "bias", "description"]

    static let lineExpectation = "a line offset on the chip, an integer from 0 to 511 (not a sysfs GPIO number)"

    static func board(from root: BoardJSON) throws(BoardDescriptionError) -> BoardDescription {
        let top = try object(root, at: "")
        try rejectUnknown(top, allowed: topLevelKeys, at: "")
        let name = try string(top["name"], at: "name", required: true) ?? ""
        guard (1...64).contains(name.count) else { throw .invalidValue(key: "name", expected: "1 to 64 characters") }
        _ = try string(top["description"], at: "description", required: false)

        guard let pulse = try milliseconds(top["pulseWidthMillis"], at: "pulseWidthMillis", range: BoardDescription.pulseWidthRange) else {
            throw .missingKey("pulseWidthMillis")
        }
        let debounce = try milliseconds(top["debounceMillis"], at: "debounceMillis", range: BoardDescription.debounceRange) ?? 30
        let hold = try milliseconds(top["pairingHoldMillis"], at: "pairingHoldMillis", range: BoardDescription.pairingHoldRange) ?? 5000
        let settle = try milliseconds(top["feedbackSettleMillis"], at: "feedbackSettleMillis", range: BoardDescription.feedbackSettleRange) ?? 100

        let outputs: [OutputRole: GPIOLineConfig] = try roles(top["outputs"], at: "outputs", required: OutputRole.required, isOutput: true)
        let inputs: [InputRole: GPIOLineConfig] = try roles(top["inputs"], at: "inputs", required: InputRole.required, isOutput: false)
        let uwb = try top["uwb"].map { (value) throws(BoardDescriptionError) in try uwbSection(value) }
        try rejectSharedLines(outputs: outputs, inputs: inputs, uwbInterrupt: uwb?.interrupt)

        return BoardDescription(name: name, outputs: outputs, inputs: inputs, pulseWidthMillis: pulse,
                                debounceMillis: debounce, pairingHoldMillis: hold, feedbackSettleMillis: settle, uwb: uwb)
    }

    static let uwbKeys: Set<String> = [
        "spidev", "interrupt", "channel", "preambleCode", "stsLength", "txAntennaDelay", "rxAntennaDelay",
        "spiHertz", "description",
    ]

    private static func uwbSection(_ value: BoardJSON) throws(BoardDescriptionError) -> BoardUWB {
        let fields = try object(value, at: "uwb")
        try rejectUnknown(fields, allowed: uwbKeys, at: "uwb")
        let spidev = try string(fields["spidev"], at: "uwb.spidev", required: true) ?? ""
        guard spidev.hasPrefix("/dev/"), (6...64).contains(spidev.count) else {
            throw .invalidValue(key: "uwb.spidev", expected: "a device path such as \"/dev/spidev0.0\"")
        }
        var uwb = BoardUWB(spidev: spidev)
        if let irq = fields["interrupt"] { uwb.interrupt = try line(irq, at: "uwb.interrupt", isOutput: false) }
        if let channel = try integer(fields["channel"], at: "uwb.channel", allowed: BoardUWB.channels.map(Int64.init), expected: "5 or 9") {
            uwb.channel = UInt8(channel)
        }
        if let code = try integer(fields["preambleCode"], at: "uwb.preambleCode",
                                  allowed: BoardUWB.preambleCodes.map(Int64.init), expected: "a preamble code from 9 to 12 (64 MHz PRF)") {
            uwb.preambleCode = UInt8(code)
        }
        if let sts = try integer(fields["stsLength"], at: "uwb.stsLength", allowed: BoardUWB.stsLengths.map(Int64.init),
                                 expected: "32, 64 or 128 (STS symbols)") {
            uwb.stsLength = UInt16(sts)
        }
        if let tx = try integer(fields["txAntennaDelay"], at: "uwb.txAntennaDelay", range: 0...Int64(UInt16.max),
                                expected: "an antenna delay in DTU, 0 to 65535 (about 16385 before calibration)") {
            uwb.txAntennaDelay = UInt16(tx)
        }
        if let rx = try integer(fields["rxAntennaDelay"], at: "uwb.rxAntennaDelay", range: 0...Int64(UInt16.max),
                                expected: "an antenna delay in DTU, 0 to 65535 (about 16385 before calibration)") {
            uwb.rxAntennaDelay = UInt16(rx)
        }
        let hz = BoardUWB.spiHertzRange
        if let clock = try integer(fields["spiHertz"], at: "uwb.spiHertz", range: Int64(hz.lowerBound)...Int64(hz.upperBound),
                                   expected: "the SPI clock after start-up in Hz, \(hz.lowerBound) to \(hz.upperBound)") {
            uwb.spiHertz = UInt32(clock)
        }
        _ = try string(fields["description"], at: "uwb.description", required: false)
        return uwb
    }

    private static func integer(_ value: BoardJSON?, at path: String, allowed: [Int64], expected: String) throws(BoardDescriptionError) -> Int64? {
        guard let value else { return nil }
        if let problem = value.notIntegerProblem { throw .notInteger(key: path, problem: problem) }
        guard case .integer(let number) = value, allowed.contains(number) else { throw .invalidValue(key: path, expected: expected) }
        return number
    }

    private static func integer(_ value: BoardJSON?, at path: String, range: ClosedRange<Int64>, expected: String) throws(BoardDescriptionError) -> Int64? {
        guard let value else { return nil }
        if let problem = value.notIntegerProblem { throw .notInteger(key: path, problem: problem) }
        guard case .integer(let number) = value, range.contains(number) else { throw .invalidValue(key: path, expected: expected) }
        return number
    }

    private static func roles<Role: RawRepresentable & CaseIterable & Hashable>(
        _ value: BoardJSON?, at path: String, required: [Role], isOutput: Bool
    ) throws(BoardDescriptionError) -> [Role: GPIOLineConfig] where Role.RawValue == String {
        guard let value else { throw .missingKey(path) }
        let table = try object(value, at: path)
        var result: [Role: GPIOLineConfig] = [:]
        // Sorted so the first error reported does not depend on dictionary order.
        for key in table.keys.sorted() {
            guard let role = Role(rawValue: key) else {
                let names = Role.allCases.map(\.rawValue).joined(separator: ", ")
                throw .unknownKey("\(path).\(key)", expected: names)
            }
            result[role] = try line(table[key] ?? .null, at: "\(path).\(key)", isOutput: isOutput)
        }
        for role in required where result[role] == nil {
            throw .missingKey("\(path).\(role.rawValue)")
        }
        return result
    }

    private static func line(_ value: BoardJSON, at path: String, isOutput: Bool) throws(BoardDescriptionError) -> GPIOLineConfig {
        let fields = try object(value, at: path)
        try rejectUnknown(fields, allowed: isOutput ? outputKeys : inputKeys, at: path)
        let chip = try string(fields["chip"], at: "\(path).chip", required: true) ?? ""
        guard (1...64).contains(chip.count) else { throw .invalidValue(key: "\(path).chip", expected: "a chip name or label, 1 to 64 characters") }
        if let problem = fields["line"]?.notIntegerProblem { throw .notInteger(key: "\(path).line", problem: problem) }
        guard case .integer(let offset)? = fields["line"] else {
            if fields["line"] == nil { throw .missingKey("\(path).line") }
            throw .invalidValue(key: "\(path).line", expected: lineExpectation)
        }
        // Pi header chips have 54 to 58 lines; the bound catches pasted sysfs numbers (512 + N
        // on Raspberry Pi kernels 6.6 and later) before they become a confusing "out of range".
        guard (0...511).contains(offset) else { throw .invalidValue(key: "\(path).line", expected: lineExpectation) }
        var config = GPIOLineConfig(chip: chip, line: UInt32(offset))
        if let activeLow = fields["activeLow"] {
            guard case .bool(let flag) = activeLow else { throw .invalidValue(key: "\(path).activeLow", expected: "true or false") }
            config.activeLow = flag
        }
        if let bias = try choice(fields["bias"], at: "\(path).bias", as: LineBias.self) { config.bias = bias }
        if let drive = try choice(fields["drive"], at: "\(path).drive", as: LineDrive.self) { config.drive = drive }
        _ = try string(fields["description"], at: "\(path).description", required: false)
        return config
    }

    private static func rejectSharedLines(outputs: [OutputRole: GPIOLineConfig], inputs: [InputRole: GPIOLineConfig],
                                          uwbInterrupt: GPIOLineConfig?) throws(BoardDescriptionError) {
        let all = outputs.sorted { $0.key < $1.key }.map { ("outputs.\($0.key.rawValue)", $0.value) }
            + inputs.sorted { $0.key < $1.key }.map { ("inputs.\($0.key.rawValue)", $0.value) }
            + (uwbInterrupt.map { [("uwb.interrupt", $0)] } ?? [])
        for (index, (key, config)) in all.enumerated() {
            for (otherKey, other) in all[..<index] where other.chip == config.chip && other.line == config.line {
                throw .duplicateLine(key: key, sameAs: otherKey)
            }
        }
    }

    // MARK: - Typed field readers

    private static func object(_ value: BoardJSON, at path: String) throws(BoardDescriptionError) -> [String: BoardJSON] {
        guard case .object(let fields) = value else {
            throw .invalidValue(key: path.isEmpty ? "(top level)" : path, expected: "an object, found \(value.typeName)")
        }
        return fields
    }

    private static func rejectUnknown(_ fields: [String: BoardJSON], allowed: Set<String>, at path: String) throws(BoardDescriptionError) {
        if let unknown = fields.keys.sorted().first(where: { !allowed.contains($0) }) {
            throw .unknownKey(path.isEmpty ? unknown : "\(path).\(unknown)", expected: allowed.sorted().joined(separator: ", "))
        }
    }

    private static func string(_ value: BoardJSON?, at path: String, required: Bool) throws(BoardDescriptionError) -> String? {
        guard let value else {
            if required { throw .missingKey(path) }
            return nil
        }
        guard case .string(let text) = value else { throw .invalidValue(key: path, expected: "a string, found \(value.typeName)") }
        return text
    }

    private static func milliseconds(_ value: BoardJSON?, at path: String, range: ClosedRange<UInt64>) throws(BoardDescriptionError) -> UInt64? {
        guard let value else { return nil }
        if let problem = value.notIntegerProblem { throw .notInteger(key: path, problem: problem) }
        guard case .integer(let number) = value, number >= 0, range.contains(UInt64(number)) else {
            throw .invalidValue(key: path, expected: "an integer from \(range.lowerBound) to \(range.upperBound) (milliseconds)")
        }
        return UInt64(number)
    }

    private static func choice<Choice: RawRepresentable & CaseIterable>(_ value: BoardJSON?, at path: String, as: Choice.Type) throws(BoardDescriptionError) -> Choice? where Choice.RawValue == String {
        guard let value else { return nil }
        let names = Choice.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", ")
        guard case .string(let text) = value, let choice = Choice(rawValue: text) else {
            throw .invalidValue(key: path, expected: "one of \(names)")
        }
        return choice
    }
}
