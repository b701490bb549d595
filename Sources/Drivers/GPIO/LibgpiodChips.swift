// Finding a GPIO chip from a board file's chip string, the same way on libgpiod 1.x and 2.x.
// v1 could open a chip by name or label itself, v2 only by path, so the lookup lives here:
// a name is a device in /dev, a label is found by opening each /dev/gpiochip* in order and
// reading its label (what v1's open-by-label did). Errors keep v1's meaning: ENOENT (no such
// device or label), ENODEV/ENOTTY (the path is no GPIO chip) are chipNotFound.
#if canImport(Glibc)
import Glibc
#endif
import CGPIOD

enum LibgpiodChips {
    /// Opens the chip `address` names, searching `deviceDirectory` for names and labels.
    static func open(_ address: GPIOChipAddress, role: String, deviceDirectory: String = "/dev") throws(GPIOError) -> OpaquePointer {
        switch address {
        case .path(let path):
            return try openPath(path, address: address, role: role)
        case .name(let name):
            return try openPath(deviceDirectory + "/" + name, address: address, role: role)
        case .label(let label):
            return try openLabel(label, address: address, role: role, deviceDirectory: deviceDirectory)
        }
    }

    private static let notAChip: Set<Int32> = [ENOENT, ENODEV, ENOTTY]

    private static func openPath(_ path: String, address: GPIOChipAddress, role: String) throws(GPIOError) -> OpaquePointer {
        // Only a character device can be a chip. Checked here because the two libgpiod
        // versions fail differently on other files (v1 opens first: EISDIR on a folder).
        guard isCharacterDevice(path) else { throw .chipNotFound(chip: address, role: role) }
        if let chip = ock_gpiod_chip_open(path) { return chip }
        let failure = Errno.current("open GPIO chip \(address.text)")
        if notAChip.contains(failure.rawValue) { throw .chipNotFound(chip: address, role: role) }
        throw .chipUnavailable(chip: address, role: role, errno: failure)
    }

    /// The first chip, in number order, whose label matches. A chip that cannot be opened for
    /// another reason (EACCES) might be the one: if no other matches, that error is reported
    /// instead of "not found", so a permissions problem is not misread as a wrong board file.
    private static func openLabel(_ label: String, address: GPIOChipAddress, role: String, deviceDirectory: String) throws(GPIOError) -> OpaquePointer {
        var unopenable: Errno?
        for name in chipDeviceNames(in: deviceDirectory) where isCharacterDevice(deviceDirectory + "/" + name) {
            guard let chip = ock_gpiod_chip_open(deviceDirectory + "/" + name) else {
                let failure = Errno.current("open GPIO chip \(name)")
                if !notAChip.contains(failure.rawValue) { unopenable = unopenable ?? failure }
                continue
            }
            if chipLabel(chip) == label { return chip }
            ock_gpiod_chip_close(chip)
        }
        if let unopenable { throw .chipUnavailable(chip: address, role: role, errno: unopenable) }
        throw .chipNotFound(chip: address, role: role)
    }

    /// The chip's label as gpiodetect prints it; nil when it cannot be read.
    static func chipLabel(_ chip: OpaquePointer) -> String? {
        var buffer = [CChar](repeating: 0, count: 64)
        guard ock_gpiod_chip_label(chip, &buffer, buffer.count) == 0 else { return nil }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Follows symlinks (udev links such as /dev/gpiochip-rp1 point at the device).
    static func isCharacterDevice(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFCHR
    }

    /// Entries named gpiochipN in `directory`, by N (gpiochip2 before gpiochip10).
    static func chipDeviceNames(in directory: String) -> [String] {
        guard let stream = opendir(directory) else { return [] }
        defer { closedir(stream) }
        var found: [(number: Int, name: String)] = []
        while let entry = readdir(stream) {
            let name = DirectoryEntry.name(entry)
            let digits = name.dropFirst(8)
            guard name.hasPrefix("gpiochip"), !digits.isEmpty, digits.count <= 9,
                  digits.allSatisfy({ $0.isASCII && $0.isNumber }), let number = Int(digits) else { continue }
            found.append((number, name))
        }
        return found.sorted { $0.number < $1.number }.map(\.name)
    }
}
