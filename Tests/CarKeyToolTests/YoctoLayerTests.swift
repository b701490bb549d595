// yocto/meta-opencarkey without a Yocto build host: oelint-adv and kas's JSON schema through
// scripts/yocto-lint.sh (clean layer: no findings; broken copies: findings), the recipe's own
// do_install run by bash against board/ (it installs exactly the files board/ provides), the
// user and groups against board/'s sysusers file and unit, the image without bluez5, the layer
// series, and the kernel fragment's option names against a real kernel's config.
import XCTest
#if canImport(Glibc)
import Glibc
#endif

final class YoctoLayerTests: XCTestCase {
    private static var root: String { Subprocess.repositoryRoot }
    private static var layer: String { root + "/yocto/meta-opencarkey" }
    private static var recipe: String { layer + "/recipes-opencarkey/carkey-agent/carkey-agent_0.1.0.bb" }
    private static var image: String { layer + "/recipes-opencarkey/images/opencarkey-image.bb" }
    private static var packagegroup: String { layer + "/recipes-opencarkey/packagegroups/packagegroup-opencarkey.bb" }
    private static var debugTools: String {
        layer + "/dynamic-layers/openembedded-layer/recipes-opencarkey/packagegroups/packagegroup-opencarkey-debug-tools.bb"
    }

    /// Yocto 6.0 "wrynose" is the LTS after 5.0 "scarthgap" (its release notes); the current
    /// LTS on 2026-12-02. Changing series is a decision, so this test names it.
    private static let ltsSeries = "wrynose"

    // MARK: lint

    func testTheLayerLintsCleanWithOelintAdvAndTheKasSchema() throws {
        let result = try Subprocess.run("/bin/bash", [Self.root + "/scripts/yocto-lint.sh"])
        let output = result.stdout + result.stderr
        XCTAssertEqual(result.status, 0, output)
        XCTAssertTrue(result.stdout.contains("yocto-lint: oelint-adv 9.11.2 --release \(Self.ltsSeries): 8 files"), output)
        XCTAssertTrue(result.stdout.contains("yocto-lint: kas 5.5 schema: 2 files"), output)
        XCTAssertEqual(result.stdout.split(separator: "\n").last.map(String.init), "yocto-lint: 0 findings", output)
    }

    /// The linter sees real mistakes: a recipe without LICENSE, a layer.conf without its
    /// dependencies, a kas file with a misspelt key and one on the wrong branch.
    func testTheLinterReportsABrokenCopyOfTheLayer() throws {
        let folder = Subprocess.makeTemporaryDirectory()
        defer { Subprocess.removeTree(folder) }
        XCTAssertEqual(try Subprocess.run("/bin/cp", ["-r", Self.layer, Self.root + "/yocto/kas", folder]).status, 0)
        let copy = folder + "/meta-opencarkey"
        try edit(copy + "/recipes-opencarkey/carkey-agent/carkey-agent_0.1.0.bb") {
            try XCTUnwrap(dropLine(startingWith: "LICENSE = ", from: $0))
        }
        try edit(copy + "/conf/layer.conf") { try XCTUnwrap(dropLine(startingWith: "LAYERDEPENDS_opencarkey", from: $0)) }
        try edit(folder + "/kas/opencarkey-rpi.yml") {
            $0.replacingOccurrences(of: "machine: raspberrypi4-64\n", with: "machin: raspberrypi4-64\n")
              .replacingOccurrences(of: "    branch: wrynose\n    layers:\n      meta:\n", with: "    branch: scarthgap\n    layers:\n      meta:\n")
        }
        let result = try Subprocess.run("/bin/bash", [Self.root + "/scripts/yocto-lint.sh", copy, folder + "/kas"])
        let output = result.stdout + result.stderr
        XCTAssertEqual(result.status, 1, output)
        for expected in ["carkey-agent_0.1.0.bb:1:error:oelint.var.mandatoryvar.LICENSE",
                         "conf/layer.conf: LAYERDEPENDS_opencarkey is missing",
                         "Additional properties are not allowed ('machin' was unexpected)",
                         "repos.openembedded-core: branch 'scarthgap', expected 'wrynose'"] {
            XCTAssertTrue(output.contains(expected), "finding \(expected) in:\n\(output)")
        }
        XCTAssertFalse(output.contains("yocto-lint: 0 findings"), output)
    }

    // MARK: the recipe against board/

    /// Runs the recipe's do_install with bash (bitbake's ${VAR} is shell syntax) into a folder,
    /// with a source tree laid out like the release tarball: board/ from this repository and
    /// two stand-in binaries. Every installed file must be a board/ file or a binary, byte for
    /// byte, and every file board/ has for systemd and udev must be installed.
    func testDoInstallInstallsExactlyTheFilesBoardProvides() throws {
        let board = Self.root + "/board"
        let provided = ["systemd/carkey-agent.service", "systemd/carkey-agent.sysusers", "udev/60-opencarkey.rules", "agent.example.json"]
        for file in provided where access(board + "/" + file, R_OK) != 0 {
            throw XCTSkip("board/\(file) is not in this tree yet")
        }
        let recipe = try Subprocess.read(Self.recipe)
        var body = try XCTUnwrap(Self.function("do_install", in: recipe), "do_install() { ... } in the recipe")
        // Ownership needs the user that useradd makes in bitbake's sysroot; here the test only
        // checks where it is asked for, then drops it.
        let owned = body.split(separator: "\n").filter { $0.contains("-o carkey -g carkey") }
        XCTAssertEqual(owned.map { $0.split(separator: " ").last.map(String.init) ?? "" },
                       ["${D}${sysconfdir}/opencarkey", "${D}${localstatedir}/lib/opencarkey"])
        body = body.replacingOccurrences(of: " -o carkey -g carkey", with: "")

        let folder = Subprocess.makeTemporaryDirectory()
        defer { Subprocess.removeTree(folder) }
        let source = folder + "/carkey-agent-0.1.0", image = folder + "/image"
        XCTAssertEqual(try Subprocess.run("/bin/mkdir", ["-p", source + "/bin", image]).status, 0)
        XCTAssertEqual(try Subprocess.run("/bin/cp", ["-r", board, source + "/board"]).status, 0)
        try Subprocess.write("#!/bin/sh\n# stand-in carkey-agent\n", to: source + "/bin/carkey-agent")
        try Subprocess.write("#!/bin/sh\n# stand-in carkey\n", to: source + "/bin/carkey")
        XCTAssertEqual(try Subprocess.run("/bin/mkdir", ["-p", source + "/libexec/opencarkey"]).status, 0)
        try Subprocess.write("#!/bin/sh\n# stand-in carkey-pkcs11-bridge\n", to: source + "/libexec/opencarkey/carkey-pkcs11-bridge")
        // openembedded-core's bitbake.conf with usrmerge (systemd images on wrynose).
        let variables = ["D=" + image, "S=" + source, "bindir=/usr/bin", "libexecdir=/usr/libexec", "sysconfdir=/etc", "localstatedir=/var",
                         "nonarch_libdir=/usr/lib", "nonarch_base_libdir=/usr/lib", "systemd_system_unitdir=/usr/lib/systemd/system"]
        let run = try Subprocess.run("/usr/bin/env", variables + ["/bin/bash", "-euc", body])
        XCTAssertEqual(run.status, 0, run.stdout + run.stderr)

        let installed = try Subprocess.run("/usr/bin/find", [image, "-type", "f", "-printf", "%P %m\n"])
        let files = Dictionary(uniqueKeysWithValues: installed.stdout.split(separator: "\n").map {
            let parts = $0.split(separator: " ")
            return (String(parts[0]), String(parts[1]))
        })
        let expected: [String: (from: String, mode: String)] = [
            "usr/bin/carkey-agent": ("bin/carkey-agent", "755"),
            "usr/bin/carkey": ("bin/carkey", "755"),
            "usr/libexec/opencarkey/carkey-pkcs11-bridge": ("libexec/opencarkey/carkey-pkcs11-bridge", "755"),
            "usr/lib/systemd/system/carkey-agent.service": ("board/systemd/carkey-agent.service", "644"),
            "usr/lib/sysusers.d/carkey-agent.conf": ("board/systemd/carkey-agent.sysusers", "644"),
            "usr/lib/udev/rules.d/60-opencarkey.rules": ("board/udev/60-opencarkey.rules", "644"),
            "etc/opencarkey/agent.example.json": ("board/agent.example.json", "644"),
        ]
        XCTAssertEqual(Set(files.keys), Set(expected.keys), "installed files")
        for (path, want) in expected {
            XCTAssertEqual(files[path], want.mode, "mode of \(path)")
            XCTAssertEqual(try Subprocess.read(image + "/" + path), try Subprocess.read(source + "/" + want.from), "\(path) is \(want.from)")
        }
        for folder in ["etc/opencarkey", "var/lib/opencarkey"] {
            let mode = try Subprocess.run("/usr/bin/stat", ["-c", "%a", image + "/" + folder])
            XCTAssertEqual(mode.stdout.filter { !$0.isWhitespace }, "700", folder)
        }
        // The other direction: a new file under board/systemd or board/udev must be installed too.
        let boardFiles = try Subprocess.run("/usr/bin/find", [board + "/systemd", board + "/udev", "-type", "f", "-printf", "%P\n"])
        let installedSources = Set(expected.values.map(\.from))
        for file in boardFiles.stdout.split(separator: "\n") {
            let inSystemd = "board/systemd/" + file, inUdev = "board/udev/" + file
            XCTAssertTrue(installedSources.contains(inSystemd) || installedSources.contains(inUdev), "board file \(file) is installed")
        }
        // Paths outside the default FILES of a package are listed, or bitbake would not ship them.
        let files_ = try XCTUnwrap(Self.value(of: "FILES:${PN}", in: recipe))
        for path in ["${nonarch_libdir}/sysusers.d/carkey-agent.conf", "${nonarch_base_libdir}/udev/rules.d/60-opencarkey.rules"] {
            XCTAssertTrue(files_.contains(path), "FILES:${PN} lists \(path)")
        }
    }

    /// useradd makes the same user, groups and memberships that board/'s sysusers file gives
    /// systemd-sysusers, and the unit runs as that user.
    func testTheRecipesUserMatchesTheSysusersFileAndTheUnit() throws {
        let sysusersPath = Self.root + "/board/systemd/carkey-agent.sysusers"
        guard access(sysusersPath, R_OK) == 0 else { throw XCTSkip("board/systemd/carkey-agent.sysusers is not in this tree yet") }
        let entries = try Subprocess.read(sysusersPath).split(separator: "\n")
            .filter { !$0.hasPrefix("#") }.map { $0.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init) }
            .filter { !$0.isEmpty }
        let users = entries.filter { $0[0] == "u" }.map { $0[1] }
        let groups = Set(entries.filter { $0[0] == "g" }.map { $0[1] })
        let memberships = Set(entries.filter { $0[0] == "m" }.map { $0[2] })
        XCTAssertEqual(users, ["carkey"])

        let recipe = try Subprocess.read(Self.recipe)
        let useradd = try XCTUnwrap(Self.value(of: "USERADD_PARAM:${PN}", in: recipe)).split(separator: " ").map(String.init)
        XCTAssertEqual(useradd.last, "carkey")
        let groupsFlag = try XCTUnwrap(useradd.firstIndex(of: "--groups"))
        XCTAssertEqual(Set(useradd[groupsFlag + 1].split(separator: ",").map(String.init)), memberships)
        XCTAssertTrue(useradd.contains("--user-group"), "a carkey group as sysusers' u line makes")
        XCTAssertTrue(useradd.contains("${localstatedir}/lib/opencarkey"), "home is the state directory")
        let groupadd = try XCTUnwrap(Self.value(of: "GROUPADD_PARAM:${PN}", in: recipe))
        let made = Set(groupadd.split(separator: ";").compactMap { $0.split(separator: " ").last.map(String.init) })
        XCTAssertEqual(made, groups, "the groups sysusers creates (dialout comes with base-passwd)")

        let unit = try Subprocess.read(Self.root + "/board/systemd/carkey-agent.service")
        XCTAssertTrue(unit.split(separator: "\n").contains("User=carkey"))
        XCTAssertEqual(Self.value(of: "SYSTEMD_SERVICE:${PN}", in: recipe), "carkey-agent.service")
    }

    // MARK: the image

    func testTheImageInstallsTheAgentWithoutBluez5() throws {
        let image = try Subprocess.read(Self.image)
        let group = try Subprocess.read(Self.packagegroup)
        XCTAssertEqual(Self.bluetoothdProblems(image: image, packagegroup: group), [])
        // The optional bring-up group: btmgmt's package, never bluez5 itself.
        let tools = Self.tokens(of: "RDEPENDS:${PN}", in: try Subprocess.read(Self.debugTools))
        XCTAssertTrue(tools.contains("bluez5-noinst-tools"), "\(tools)")
        XCTAssertFalse(tools.contains("bluez5") || tools.contains("pi-bluetooth"), "\(tools)")
        // The checker itself: the same files with bluetoothd let back in are caught.
        let withBluez = image.replacingOccurrences(of: "    packagegroup-opencarkey \\\n", with: "    packagegroup-opencarkey \\\n    bluez5 \\\n")
        XCTAssertNotEqual(withBluez, image)
        XCTAssertFalse(Self.bluetoothdProblems(image: withBluez, packagegroup: group).isEmpty)
        let baseImage = image.replacingOccurrences(of: "inherit core-image features_check", with: "require recipes-core/images/core-image-base.bb\ninherit core-image features_check")
        XCTAssertFalse(Self.bluetoothdProblems(image: baseImage, packagegroup: group).isEmpty)
        let groupWithBluez = group.replacingOccurrences(of: "RDEPENDS:${PN} = \"carkey-agent\"", with: "RDEPENDS:${PN} = \"carkey-agent bluez5\"")
        XCTAssertFalse(Self.bluetoothdProblems(image: image, packagegroup: groupWithBluez).isEmpty)
        let unguarded = image.replacingOccurrences(of: "PACKAGE_EXCLUDE += \"bluez5 pi-bluetooth\"", with: "")
        XCTAssertFalse(Self.bluetoothdProblems(image: unguarded, packagegroup: group).isEmpty)
    }

    /// What would put bluetoothd (package bluez5) into the image: bluez5 installed directly or
    /// through the packagegroup, core-image-base (packagegroup-base-bluetooth RDEPENDS on
    /// bluez5), or the PACKAGE_EXCLUDE guard missing.
    private static func bluetoothdProblems(image: String, packagegroup: String) -> [String] {
        var problems: [String] = []
        let installs = tokens(of: "IMAGE_INSTALL", in: image) + tokens(of: "CORE_IMAGE_EXTRA_INSTALL", in: image)
        if installs.contains("bluez5") { problems.append("IMAGE_INSTALL has bluez5") }
        if installs.contains(where: { $0.hasPrefix("packagegroup-base") }) { problems.append("IMAGE_INSTALL has packagegroup-base") }
        if !installs.contains("packagegroup-opencarkey") { problems.append("IMAGE_INSTALL lacks packagegroup-opencarkey") }
        let code = image.split(separator: "\n").filter { !$0.hasPrefix("#") }
        if code.contains(where: { $0.contains("core-image-base") }) { problems.append("the image builds on core-image-base") }
        if !tokens(of: "PACKAGE_EXCLUDE", in: image).contains("bluez5") { problems.append("PACKAGE_EXCLUDE lacks bluez5") }
        for variable in ["RDEPENDS:${PN}", "RRECOMMENDS:${PN}"]
        where tokens(of: variable, in: packagegroup).contains(where: { $0 == "bluez5" || $0 == "pi-bluetooth" }) {
            problems.append("\(variable) of the packagegroup has bluez5")
        }
        if !tokens(of: "RDEPENDS:${PN}", in: packagegroup).contains("carkey-agent") { problems.append("the packagegroup lacks carkey-agent") }
        return problems
    }

    // MARK: series and kas

    func testTheLayerAndTheKasFilesAreOnTheCurrentLTS() throws {
        let conf = try Subprocess.read(Self.layer + "/conf/layer.conf")
        XCTAssertEqual(Self.value(of: "LAYERSERIES_COMPAT_opencarkey", in: conf), Self.ltsSeries)
        XCTAssertEqual(Self.value(of: "BBFILE_COLLECTIONS", in: conf), "opencarkey")
        let kas = try Subprocess.read(Self.root + "/yocto/kas/opencarkey-rpi.yml")
        let branches = kas.split(separator: "\n").filter { $0.hasPrefix("    branch: ") }.map { $0.dropFirst(12) }
        // bitbake's branch for wrynose is "2.16"; the four layer repositories use the codename.
        XCTAssertEqual(branches, ["\"2.16\"", "wrynose", "wrynose", "wrynose"])
        XCTAssertTrue(kas.contains("\nmachine: raspberrypi4-64\n"))
        XCTAssertTrue(kas.contains("INIT_MANAGER = \"systemd\""), "poky's default init is SysVinit; the unit is Type=notify")
        XCTAssertTrue(try Subprocess.read(Self.root + "/yocto/kas/opencarkey-rpi5.yml").contains("\nmachine: raspberrypi5\n"))
    }

    // MARK: kernel fragment

    /// Every option in the fragment is a real Kconfig symbol: the running Debian kernel's
    /// config lists each (set, module or "is not set"), so a misspelt name fails here.
    func testTheKernelFragmentNamesRealOptions() throws {
        let fragment = try Subprocess.read(Self.layer + "/dynamic-layers/raspberrypi/recipes-kernel/linux/files/opencarkey.cfg")
        let options = fragment.split(separator: "\n").filter { $0.hasPrefix("CONFIG_") }.map { String($0.split(separator: "=")[0]) }
        for needed in ["CONFIG_BT", "CONFIG_BT_LE", "CONFIG_BT_HCIUART_SERDEV", "CONFIG_SPI_SPIDEV", "CONFIG_GPIO_CDEV", "CONFIG_GPIO_CDEV_V1"] {
            XCTAssertTrue(options.contains(needed), "the fragment sets \(needed)")
        }
        XCTAssertEqual(Set(options).count, options.count, "each option once")
        let configs = try Subprocess.run("/bin/sh", ["-c", "ls /boot/config-* 2>/dev/null | sort | tail -1"]).stdout
            .filter { !$0.isNewline }
        guard !configs.isEmpty else { throw XCTSkip("no /boot/config-* (a Debian kernel) to check the option names against") }
        let known = Set(try Subprocess.read(configs).split(separator: "\n").compactMap { line -> String? in
            if line.hasPrefix("CONFIG_") { return String(line.split(separator: "=")[0]) }
            if line.hasPrefix("# CONFIG_"), line.hasSuffix(" is not set") { return String(line.dropFirst(2).split(separator: " ")[0]) }
            return nil
        })
        XCTAssertGreaterThan(known.count, 1000, configs)
        for option in options { XCTAssertTrue(known.contains(option), "\(option) is an option of \(configs)") }
    }

    // MARK: reading bitbake files

    /// The value of a plain assignment (`=`, `?=`, `??=`, `+=`), continuation lines joined and
    /// whitespace collapsed; nil when the variable is not assigned. Enough for this layer's files.
    private static func value(of name: String, in text: String) -> String? {
        let joined = text.replacingOccurrences(of: "\\\n", with: " ")
        var parts: [String] = []
        for line in joined.split(separator: "\n") {
            for op in [" = \"", " ?= \"", " ??= \"", " += \""] where line.hasPrefix(name + op) {
                let rest = line.dropFirst(name.count + op.count)
                guard let end = rest.lastIndex(of: "\"") else { continue }
                parts.append(rest[..<end].split(whereSeparator: { $0 == " " || $0 == "\t" }).joined(separator: " "))
            }
        }
        return parts.isEmpty ? nil : parts.joined(separator: " ")
    }

    private static func tokens(of name: String, in text: String) -> [String] {
        (value(of: name, in: text) ?? "").split(separator: " ").map(String.init)
    }

    /// The body of a shell function `NAME() { ... }` (closing brace alone at the line start).
    private static func function(_ name: String, in text: String) -> String? {
        guard let start = text.range(of: "\n\(name)() {\n"), let end = text.range(of: "\n}\n", range: start.upperBound..<text.endIndex) else { return nil }
        return String(text[start.upperBound..<end.lowerBound])
    }

    private func dropLine(startingWith prefix: String, from text: String) -> String? {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        guard lines.contains(where: { $0.hasPrefix(prefix) }) else { return nil }
        return lines.filter { !$0.hasPrefix(prefix) }.joined(separator: "\n")
    }

    private func edit(_ path: String, _ change: (String) throws -> String) throws {
        let before = try Subprocess.read(path)
        let after = try change(before)
        XCTAssertNotEqual(after, before, "the edit changed \(path)")
        try Subprocess.write(after, to: path)
    }
}
