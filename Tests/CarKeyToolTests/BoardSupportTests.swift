// board/overlays/*.dts compile with the real dtc without a warning, and the compiled overlays put
// the UWB module's SPI device, IRQ and reset lines where the board files say (the board JSON is
// the source the agent reads; the overlay is what the kernel reads; this test fails when they
// disagree). A second class checks the udev rules, the sysusers file and the unit's groups
// against each other.
import XCTest
import Drivers
#if canImport(Glibc)
import Glibc
#endif

final class BoardSupportTests: XCTestCase {
    static var repositoryRoot: String { Subprocess.repositoryRoot }

    private var folder = ""
    override func setUp() { folder = Subprocess.makeTemporaryDirectory() }
    override func tearDown() { Subprocess.removeTree(folder) }

    private func requireDTC() throws {
        guard access("/usr/bin/dtc", X_OK) == 0 else {
            if getenv("CARKEY_REQUIRE_ARTIFACTS").map({ String(cString: $0) }) == "1" { XCTFail("dtc is missing"); return }
            throw XCTSkip("dtc is not installed (Debian package device-tree-compiler)")
        }
    }

    /// Compiles as the README says (dtc -@ -I dts -O dtb), fails on any warning, and decompiles
    /// the result so the test reads what the kernel would read, not the source.
    private func compile(_ source: String) throws -> DeviceTreeText {
        let dtbo = folder + "/out.dtbo"
        let built = try Subprocess.run("/usr/bin/dtc", ["-@", "-I", "dts", "-O", "dtb", "-o", dtbo, source])
        XCTAssertEqual(built.status, 0, built.stderr)
        XCTAssertEqual(built.stderr, "", "dtc warnings for \(source)")
        // Decompiling an overlay warns about its unresolved phandles (they are fixups): only stdout counts.
        let text = try Subprocess.run("/usr/bin/dtc", ["-I", "dtb", "-O", "dts", dtbo])
        XCTAssertEqual(text.status, 0, text.stderr)
        return DeviceTreeText(text.stdout)
    }

    private func board(_ name: String) throws -> BoardDescription {
        try BoardDescription.load(path: Self.repositoryRoot + "/board/\(name).json")
    }

    // MARK: Raspberry Pi 4 and 5

    func testThePiOverlayCompilesAndMatchesBothPiUWBBoardFiles() throws {
        try requireDTC()
        let tree = try compile(Self.repositoryRoot + "/board/overlays/opencarkey-dwm3000-rpi.dts")
        XCTAssertEqual(tree.property("/", "compatible"), "\"brcm,bcm2835\"")
        XCTAssertEqual(Set(tree.propertyNames("/__fixups__")), ["spi0", "spidev0", "gpio"], "the labels it patches")
        for name in ["raspberrypi4-uwb", "raspberrypi5-uwb"] {
            XCTAssertEqual(PiOverlayCheck.problems(tree: tree, board: try board(name)), [], name)
        }
    }

    func testTheCrossCheckFailsWhenTheOverlayMovesTheIRQLine() throws {
        try requireDTC()
        let source = String(decoding: try Files.read(Self.repositoryRoot + "/board/overlays/opencarkey-dwm3000-rpi.dts"), as: UTF8.self)
        let moved = folder + "/moved.dts"
        try Subprocess.write(source.replacingOccurrences(of: "irq-gpios = <&gpio 25 0>", with: "irq-gpios = <&gpio 24 0>"), to: moved)
        let problems = PiOverlayCheck.problems(tree: try compile(moved), board: try board("raspberrypi4-uwb"))
        XCTAssertTrue(problems.contains { $0.hasPrefix("irq-gpios line 24") }, "\(problems)")
        // And when the reset line lands on a line the board file already uses.
        let clash = folder + "/clash.dts"
        try Subprocess.write(source.replacingOccurrences(of: "reset-gpios = <&gpio 4 1>", with: "reset-gpios = <&gpio 17 1>"), to: clash)
        let clashes = PiOverlayCheck.problems(tree: try compile(clash), board: try board("raspberrypi5-uwb"))
        XCTAssertTrue(clashes.contains { $0.contains("reset-gpios line 17 is used by the board file") }, "\(clashes)")
    }

    func testABrokenOverlayIsReportedByDTC() throws {
        try requireDTC()
        let broken = folder + "/broken.dts"
        try Subprocess.write("/dts-v1/;\n/plugin/;\n&spi0 { status = \"okay\" };\n", to: broken)
        let built = try Subprocess.run("/usr/bin/dtc", ["-@", "-I", "dts", "-O", "dtb", "-o", folder + "/b.dtbo", broken])
        XCTAssertNotEqual(built.status, 0, "a missing semicolon is a syntax error")
    }

    // MARK: SK-TDA4VM

    func testTheSKTDA4VMOverlayCompilesAndMatchesItsBoardFile() throws {
        try requireDTC()
        let tree = try compile(Self.repositoryRoot + "/board/overlays/opencarkey-dwm3000-sk-tda4vm.dts")
        let sk = try board("sk-tda4vm")
        let uwb = try XCTUnwrap(sk.uwb)
        let bus = "/fragment@1/__overlay__/opencarkey-uwb-spi"
        XCTAssertEqual(tree.property(bus, "compatible"), "\"spi-gpio\"")
        XCTAssertEqual(tree.property("/fragment@0/__overlay__", "spi8"), "\"/opencarkey-uwb-spi\"")
        XCTAssertEqual(tree.property("/fragment@1/__overlay__/opencarkey-uwb-spi/uwb@0", "reg").flatMap(DeviceTreeText.cells), [0])
        XCTAssertEqual(uwb.spidev, "/dev/spidev8.0", "alias spi8, chip select 0")
        let device = bus + "/uwb@0"
        let irq = try XCTUnwrap(tree.property(device, "irq-gpios").flatMap(DeviceTreeText.cells))
        XCTAssertEqual(irq.dropFirst().first, uwb.interrupt?.line)
        XCTAssertEqual(irq.last, uwb.interrupt?.activeLow == true ? 1 : 0)
        XCTAssertEqual(uwb.interrupt?.chip, "600000.gpio", "main_gpio0's label under gpio-davinci")
        // The bus, IRQ and reset lines are no actuator's or switch's line.
        let used = Set(sk.outputs.values.map(\.line) + sk.inputs.values.map(\.line))
        for key in ["sck-gpios", "mosi-gpios", "miso-gpios", "cs-gpios"] {
            let line = try XCTUnwrap(tree.property(bus, key).flatMap(DeviceTreeText.cells)?.dropFirst().first, key)
            XCTAssertFalse(used.contains(line), "\(key) line \(line) is used by the board file")
        }
        let reset = try XCTUnwrap(tree.property(device, "reset-gpios").flatMap(DeviceTreeText.cells))
        XCTAssertFalse(used.contains(reset[1]), "reset line")
        XCTAssertEqual(reset[2], 1, "RSTn is active low")
        XCTAssertLessThanOrEqual(uwb.spiHertz, 2_000_000, "a GPIO-driven bus: keep the board file's clock at the overlay's")
    }
}

/// What the Pi overlay must say for a Pi board file; each string is one disagreement.
enum PiOverlayCheck {
    static func problems(tree: DeviceTreeText, board: BoardDescription) -> [String] {
        var problems: [String] = []
        guard let uwb = board.uwb, let interrupt = uwb.interrupt else { return ["\(board.name): no uwb.interrupt"] }
        // Which fragment patches which label is in __fixups__: "/fragment@N:target:0".
        func fragment(for label: String) -> String? {
            // dtc prints a string list as "a\0b\0c".
            guard let value = tree.property("/__fixups__", label)?.filter({ $0 != "\"" }) else { return nil }
            let entries = value.split(separator: "\\0").map(String.init)
            return entries.first { $0.hasSuffix(":target:0") }.map { String($0.dropLast(":target:0".count)) }
        }
        if uwb.spidev != "/dev/spidev0.0" { problems.append("board spidev \(uwb.spidev) is not SPI0 CE0") }
        guard fragment(for: "spi0") != nil else { return problems + ["no fragment enables spi0"] }
        guard let device = fragment(for: "spidev0").map({ $0 + "/__overlay__" }) else { return problems + ["no fragment for spidev0"] }
        guard let irq = tree.property(device, "irq-gpios").flatMap(DeviceTreeText.cells), irq.count == 3,
              let reset = tree.property(device, "reset-gpios").flatMap(DeviceTreeText.cells), reset.count == 3 else {
            return problems + ["spidev0 has no irq-gpios/reset-gpios of three cells"]
        }
        if irq[1] != interrupt.line { problems.append("irq-gpios line \(irq[1]) but the board file's uwb.interrupt is \(interrupt.line)") }
        if (irq[2] == 1) != interrupt.activeLow { problems.append("irq-gpios flags \(irq[2]) disagree with activeLow \(interrupt.activeLow)") }
        let used = Set(board.outputs.values.map(\.line) + board.inputs.values.map(\.line))
        if used.contains(reset[1]) { problems.append("reset-gpios line \(reset[1]) is used by the board file") }
        if reset[2] != 1 { problems.append("reset-gpios must be active low (RSTn)") }
        // The pin configuration the kernel applies when spidev binds.
        guard let pinsNode = fragment(for: "gpio").flatMap({ tree.children(of: $0 + "/__overlay__").first }),
              let pins = tree.property(pinsNode, "brcm,pins").flatMap(DeviceTreeText.cells),
              let functions = tree.property(pinsNode, "brcm,function").flatMap(DeviceTreeText.cells),
              let pulls = tree.property(pinsNode, "brcm,pull").flatMap(DeviceTreeText.cells),
              pins.count == functions.count, pins.count == pulls.count else {
            return problems + ["no brcm,pins node with one function and one pull per pin"]
        }
        let wanted: [(line: UInt32, pull: UInt32, what: String)] = [
            (interrupt.line, interrupt.bias == .pullDown ? 1 : interrupt.bias == .pullUp ? 2 : 0, "IRQ"),
            (reset[1], 0, "reset (no pull: RSTn is never driven high)"),
        ]
        for (line, pull, what) in wanted {
            guard let index = pins.firstIndex(of: line) else { problems.append("\(what) line \(line) is not in brcm,pins"); continue }
            if functions[index] != 0 { problems.append("\(what) line \(line) is not an input") }
            if pulls[index] != pull { problems.append("\(what) line \(line) has pull \(pulls[index]), expected \(pull)") }
        }
        return problems
    }
}

/// The output of `dtc -O dts`: nodes by path, each with its properties as written by dtc.
struct DeviceTreeText {
    private(set) var properties: [String: [(String, String)]] = [:]
    private(set) var nodes: [String] = []

    init(_ text: String) {
        var path: [String] = []
        for raw in text.split(separator: "\n") {
            let line = raw.trimmedOf(" \t")
            if line.hasSuffix("{") {
                let name = line.dropLast().trimmedOf(" \t")
                path.append(name == "/" ? "" : name)
                nodes.append(Self.join(path))
            } else if line == "};" {
                _ = path.popLast()
            } else if line.hasSuffix(";"), let equals = line.firstIndex(of: "=") {
                let key = line[..<equals].trimmedOf(" \t")
                let value = line[line.index(after: equals)...].dropLast().trimmedOf(" \t")
                properties[Self.join(path), default: []].append((key, value))
            }
        }
    }

    private static func join(_ path: [String]) -> String {
        let joined = path.joined(separator: "/")
        return joined.isEmpty ? "/" : joined
    }

    func property(_ node: String, _ key: String) -> String? { properties[node]?.first { $0.0 == key }?.1 }
    func propertyNames(_ node: String) -> [String] { properties[node]?.map(\.0) ?? [] }
    func children(of node: String) -> [String] {
        let prefix = node == "/" ? "/" : node + "/"
        return nodes.filter { $0.hasPrefix(prefix) && !$0.dropFirst(prefix.count).contains("/") && $0 != node }
    }

    /// "<0xffffffff 0x19 0x00>" -> [4294967295, 25, 0]; nil for anything that is not one cell list.
    static func cells(_ value: String) -> [UInt32]? {
        guard value.hasPrefix("<"), value.hasSuffix(">") else { return nil }
        var result: [UInt32] = []
        for word in value.dropFirst().dropLast().split(separator: " ") {
            guard word.hasPrefix("0x"), let number = UInt32(word.dropFirst(2), radix: 16) else { return nil }
            result.append(number)
        }
        return result
    }
}

private extension StringProtocol {
    func trimmedOf(_ set: String) -> String {
        var slice = Substring(self)
        while let first = slice.first, set.contains(first) { slice = slice.dropFirst() }
        while let last = slice.last, set.contains(last) { slice = slice.dropLast() }
        return String(slice)
    }
}

/// The udev rules, the sysusers file and the unit agree on the groups, and the rules file is
/// well formed (udevadm verify only arrived in systemd 254; this machine has 252, and udevadm
/// test needs the devices). The sysusers file goes through the real systemd-sysusers.
final class BoardPermissionsTests: XCTestCase {
    private static func text(_ relative: String) throws -> String {
        String(decoding: try Files.read(BoardSupportTests.repositoryRoot + "/board/" + relative, limit: 1 << 16), as: UTF8.self)
    }

    func testTheRulesParseAndGrantEachDeviceToAGroup() throws {
        let rules = try UdevRules(try Self.text("udev/60-opencarkey.rules"))
        func group(forSubsystem subsystem: String) -> String? {
            rules.rules.first { $0.matches["SUBSYSTEM"] == subsystem }?.assignments["GROUP"]
        }
        XCTAssertEqual(group(forSubsystem: "gpio"), "gpio")
        XCTAssertEqual(group(forSubsystem: "spidev"), "spi")
        XCTAssertEqual(group(forSubsystem: "tty"), "dialout")
        for rule in rules.rules where rule.assignments["MODE"] != nil {
            XCTAssertEqual(rule.assignments["MODE"], "0660", "owner and group only: line \(rule.line)")
        }
        // The spidev binding for boards without a "spidev" compatible.
        let bind = try XCTUnwrap(rules.rules.first { $0.matches["SUBSYSTEM"] == "spi" })
        XCTAssertEqual(bind.matches["ACTION"], "add")
        XCTAssertEqual(bind.assignments["ATTR{driver_override}"], "spidev")
    }

    func testTheParserRejectsMalformedRules() {
        let bad = [
            #"SUBSYSTEM="gpio", GROUP="gpio""#: "match key SUBSYSTEM",          // assignment where a match belongs
            #"SUBSYSTEM=="gpio", GROUP=="gpio""#: "GROUP",                      // comparison on an assignment key
            #"SUBSYSTEM=="gpio" GROUP="gpio""#: "comma",                        // missing separator
            #"SUBSYSTEM=="gpio", GROUP="gpio", MODE="666""#: "MODE",            // not four octal digits
            #"SUBSYSTEM=="gpio", GROUP="gpio", MODE="0666""#: "MODE",           // world-writable
            #"SUBSYSTEM=="gpio", GROUP="gpio"#: "quote",                        // unterminated value
            #"SUBSYSTEM=="gpio", OWNER="carkey""#: "unknown key OWNER",         // keys this file does not use
            #"GROUP="gpio""#: "no match",                                       // a rule for every device
        ]
        for (line, expected) in bad {
            XCTAssertThrowsError(try UdevRules(line), line) { error in
                XCTAssertTrue("\(error)".contains(expected), "\(line): \(error)")
            }
        }
        XCTAssertNoThrow(try UdevRules("# comment\n\nKERNEL==\"x\", GROUP=\"spi\"\n"))
    }

    func testGroupsAgreeAcrossRulesSysusersAndUnit() throws {
        let rules = try UdevRules(try Self.text("udev/60-opencarkey.rules"))
        let sysusers = try Sysusers(try Self.text("systemd/carkey-agent.sysusers"))
        let unit = try Self.text("systemd/carkey-agent.service")
        let supplementary = unit.split(separator: "\n").filter { $0.hasPrefix("SupplementaryGroups=") }
            .flatMap { $0.dropFirst("SupplementaryGroups=".count).split(separator: " ").map(String.init) }
        let granted = Set(rules.rules.compactMap { $0.assignments["GROUP"] })
        XCTAssertEqual(granted, ["gpio", "spi", "dialout", "tss"], "tss: /dev/tpmrm0 for the tpm2 key vault")
        XCTAssertEqual(Set(supplementary), granted, "the unit joins every group the rules grant, and no other")
        XCTAssertEqual(sysusers.memberships["carkey"], granted, "sysusers makes carkey a member of the same groups")
        XCTAssertEqual(sysusers.users, ["carkey"])
        XCTAssertTrue(sysusers.groups.isSuperset(of: ["gpio", "spi", "tss"]), "created on plain Debian (tss where no tpm2 package made it)")
    }

    func testSystemdSysusersCreatesTheUserAndMemberships() throws {
        guard access("/usr/bin/systemd-sysusers", X_OK) == 0 else { throw XCTSkip("systemd-sysusers is not installed") }
        let root = Subprocess.makeTemporaryDirectory()
        defer { Subprocess.removeTree(root) }
        XCTAssertEqual(mkdir(root + "/etc", 0o755), 0)
        let result = try Subprocess.run("/usr/bin/systemd-sysusers",
                                        ["--root=" + root, BoardSupportTests.repositoryRoot + "/board/systemd/carkey-agent.sysusers"])
        XCTAssertEqual(result.status, 0, result.stderr)
        let passwd = try Subprocess.read(root + "/etc/passwd").split(separator: "\n").map { $0.split(separator: ":", omittingEmptySubsequences: false) }
        let carkey = try XCTUnwrap(passwd.first { $0.first == "carkey" })
        XCTAssertEqual(carkey[5], "/var/lib/opencarkey")
        XCTAssertEqual(carkey[6], "/usr/sbin/nologin", "no login shell")
        XCTAssertLessThan(Int(carkey[2]) ?? 0, 1000, "a system user")
        XCTAssertNotEqual(carkey[2], "0")
        let group = try Subprocess.read(root + "/etc/group").split(separator: "\n").map { $0.split(separator: ":", omittingEmptySubsequences: false) }
        for name in ["gpio", "spi", "dialout"] {
            let entry = try XCTUnwrap(group.first { $0.first.map(String.init) == name }, name)
            XCTAssertEqual(entry.last.map { $0.split(separator: ",").map(String.init) }, ["carkey"], name)
        }
    }
}

struct BoardFileError: Error, CustomStringConvertible {
    let description: String
}

/// udev rules as this project writes them: comma-separated KEY==/!="value" matches and
/// KEY=/+="value" assignments, one rule a line, comments and blank lines ignored.
struct UdevRules {
    struct Rule {
        var line = 0
        var matches: [String: String] = [:]
        var assignments: [String: String] = [:]
    }
    static let matchKeys: Set<String> = ["ACTION", "SUBSYSTEM", "KERNEL", "DRIVER"]
    static let assignKeys: Set<String> = ["GROUP", "MODE", "RUN", "RUN{builtin}"]
    static let maxLines = 200

    private(set) var rules: [Rule] = []

    init(_ text: String) throws {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        guard lines.count <= Self.maxLines else { throw BoardFileError(description: "more than \(Self.maxLines) lines") }
        for (index, raw) in lines.enumerated() {
            let line = raw.trimmedOf(" \t")
            if line.isEmpty || line.hasPrefix("#") { continue }
            rules.append(try Self.rule(Array(line), number: index + 1))
        }
    }

    private static func rule(_ chars: [Character], number: Int) throws -> Rule {
        var rule = Rule(line: number)
        var i = 0
        func fail(_ why: String) -> BoardFileError { BoardFileError(description: "line \(number): \(why)") }
        while i < chars.count {
            var key = ""
            while i < chars.count, chars[i].isUppercase || chars[i] == "_" || chars[i] == "{" || chars[i] == "}" || chars[i].isLowercase || chars[i].isNumber {
                key.append(chars[i]); i += 1
            }
            var op = ""
            while i < chars.count, "=!+:-".contains(chars[i]) { op.append(chars[i]); i += 1 }
            guard i < chars.count, chars[i] == "\"" else { throw fail("expected a quoted value after \(key)\(op)") }
            i += 1
            var value = ""
            while i < chars.count, chars[i] != "\"" { value.append(chars[i]); i += 1 }
            guard i < chars.count else { throw fail("unterminated quote after \(key)") }
            i += 1
            let isMatch = op == "==" || op == "!="
            let isEnvOrAttr = key.hasPrefix("ENV{") || key.hasPrefix("ATTR{")
            if isMatch {
                guard matchKeys.contains(key) || isEnvOrAttr else { throw fail("\(key) cannot be compared (unknown key \(key))") }
                rule.matches[key] = value
            } else if op == "=" || op == "+=" {
                if matchKeys.contains(key) { throw fail("match key \(key) needs == or !=") }
                guard assignKeys.contains(key) || isEnvOrAttr else { throw fail("unknown key \(key)") }
                if key == "MODE" {
                    guard value.count == 4, value.allSatisfy({ ("0"..."7").contains($0) }) else { throw fail("MODE \(value): four octal digits") }
                    guard value.last == "0" else { throw fail("MODE \(value) gives others access") }
                }
                rule.assignments[key] = value
            } else {
                throw fail("\(key): operator \(op) is not used here")
            }
            while i < chars.count, chars[i] == " " { i += 1 }
            if i < chars.count {
                guard chars[i] == "," else { throw fail("expected a comma after \(key)") }
                i += 1
                while i < chars.count, chars[i] == " " { i += 1 }
            }
        }
        guard !rule.matches.isEmpty else { throw fail("no match key: the rule would apply to every device") }
        guard !rule.assignments.isEmpty else { throw fail("no assignment") }
        return rule
    }
}

/// sysusers.d(5) lines of the types u, g and m.
struct Sysusers {
    private(set) var users: Set<String> = []
    private(set) var groups: Set<String> = []
    private(set) var memberships: [String: Set<String>] = [:]

    init(_ text: String) throws {
        for raw in text.split(separator: "\n") {
            let line = raw.trimmedOf(" \t")
            if line.isEmpty || line.hasPrefix("#") { continue }
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 2 else { throw BoardFileError(description: "sysusers: \(line)") }
            let name = String(fields[1])
            switch fields[0] {
            case "u": users.insert(name)
            case "g": groups.insert(name)
            case "m":
                guard fields.count >= 3 else { throw BoardFileError(description: "sysusers m without a group: \(line)") }
                memberships[name, default: []].insert(String(fields[2]))
            default: throw BoardFileError(description: "sysusers type \(fields[0]) not used here")
            }
        }
    }
}
