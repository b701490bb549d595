// The store budget's settings: the config file's "store" object, then flags on top. Sizes in
// MiB and ages in days, as an installer thinks of them; the defaults suit an SD card shared
// with the operating system (see StoreBudget and docs/operations.md, section 1).
import CommandLineKit
import Drivers

enum StoreSettings {
    static let keys: Set<String> = ["maxSizeMiB", "reserveMiB", "maxEventAgeDays", "maxCriticalEventAgeDays"]
    static let sizeRange: ClosedRange<Int64> = 1...65_536
    static let reserveRange: ClosedRange<Int64> = 0...1024
    static let ageRange: ClosedRange<Int64> = 1...36_500

    static let optionSpecs: [Option] = [
        .value("store-max-mib", placeholder: "MIB",
               help: "Database size budget in MiB (default \(StoreBudget.defaultMaxDatabaseBytes >> 20))"),
        .value("store-reserve-mib", placeholder: "MIB",
               help: "Reserve file for security writes on a full disk, in MiB, 0 for none (default \(StoreBudget.defaultReserveBytes >> 20))"),
    ]

    /// The file's "store" object; every error names its key.
    static func read(_ store: ConfigReader) throws(ConfigError) -> StoreBudget {
        var budget = StoreBudget()
        if let size = try store.integer("maxSizeMiB", in: sizeRange) { budget.maxDatabaseBytes = Int64(size) << 20 }
        if let reserve = try store.integer("reserveMiB", in: reserveRange) { budget.reserveBytes = Int64(reserve) << 20 }
        if let days = try store.integer("maxEventAgeDays", in: ageRange) { budget.maxEventAgeSeconds = Int64(days) * 86_400 }
        let critical = try store.integer("maxCriticalEventAgeDays", in: ageRange)
        if let critical { budget.maxCriticalEventAgeSeconds = Int64(critical) * 86_400 }
        guard budget.maxCriticalEventAgeSeconds >= budget.maxEventAgeSeconds else {
            throw .invalidValue(key: store.key(critical == nil ? "maxEventAgeDays" : "maxCriticalEventAgeDays"),
                                expected: "maxCriticalEventAgeDays (default \(StoreBudget.defaultMaxCriticalEventAgeSeconds / 86_400)) "
                                    + "not below maxEventAgeDays: access decisions are kept longest")
        }
        return budget
    }

    /// The file's budget with the flags applied.
    static func parse(_ arguments: ParsedArguments, file: StoreBudget) throws -> StoreBudget {
        var budget = file
        if let size = try arguments.integer("store-max-mib") {
            guard sizeRange.contains(Int64(size)) else {
                throw UsageError.invalidValue(String(size), for: "--store-max-mib", expected: "1 to 65536")
            }
            budget.maxDatabaseBytes = Int64(size) << 20
        }
        if let reserve = try arguments.integer("store-reserve-mib") {
            guard reserveRange.contains(Int64(reserve)) else {
                throw UsageError.invalidValue(String(reserve), for: "--store-reserve-mib", expected: "0 to 1024")
            }
            budget.reserveBytes = Int64(reserve) << 20
        }
        return budget
    }

    static func displayLines(_ budget: StoreBudget) -> [String] {
        [
            "store.maxSizeMiB: \(budget.maxDatabaseBytes >> 20)",
            "store.reserveMiB: \(budget.reserveBytes >> 20)",
            "store.maxEventAgeDays / maxCriticalEventAgeDays: \(budget.maxEventAgeSeconds / 86_400) / \(budget.maxCriticalEventAgeSeconds / 86_400)",
        ]
    }
}
