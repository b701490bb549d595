// How many routine audit records (sessions opening and closing, status reads, repeated identical
// refusals) a key gets itemised per minute before they are folded into a summary row
// (AuditCoalescer). The default keeps a few ordinary visits a minute fully itemised and an
// attacker's loop to one row a minute; a car-sharing fleet that wants every visit as a row, or
// a benchmark of the durable path at full event rate, raises it. Actuations, enrollments and
// revocations are never folded, whatever this says.
import CommandLineKit

enum AuditSettings {
    static let keys: Set<String> = ["routineRecordsPerKeyPerMinute"]
    static let range: ClosedRange<Int64> = 1...1_000_000
    static let defaultPerMinute = AuditCoalescer.keyPolicy.budget

    static let optionSpecs: [Option] = [
        .value("audit-routine-per-minute", placeholder: "N",
               help: "Routine audit rows itemised per key per minute before they are summarised (default \(defaultPerMinute))"),
    ]

    /// The file's "audit" object; errors name the key.
    static func read(_ audit: ConfigReader) throws(ConfigError) -> Int? {
        try audit.integer("routineRecordsPerKeyPerMinute", in: range)
    }

    /// The file's value with the flag on top.
    static func parse(_ arguments: ParsedArguments, file: Int?) throws -> Int {
        if let value = try arguments.integer("audit-routine-per-minute") {
            guard range.contains(Int64(value)) else {
                throw UsageError.invalidValue(String(value), for: "--audit-routine-per-minute", expected: "1 to 1000000")
            }
            return value
        }
        return file ?? defaultPerMinute
    }

    static func coalescer(perMinute: Int) -> AuditCoalescer {
        AuditCoalescer(keyPolicy: AuditCoalescer.Policy(budget: perMinute, windowMillis: AuditCoalescer.keyPolicy.windowMillis))
    }
}
