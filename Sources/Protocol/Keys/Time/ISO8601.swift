// A small, bounded parser and printer for the one ISO 8601 form the tools use:
// YYYY-MM-DDTHH:MM:SS followed by Z or a +hh:mm / -hh:mm offset. No Foundation.

public enum ISO8601 {
    public struct ParseError: Error, Equatable, Sendable, CustomStringConvertible {
        public let reason: String
        public var description: String { reason }
    }

    /// Longest accepted text: "2026-01-01T00:00:00+05:30".
    public static let maxLength = 25

    /// Seconds since 1970-01-01T00:00:00Z. Years 1970 to 2106; every field range-checked
    /// (no leap second 60, no February 30), offsets up to ±23:59.
    public static func parse(_ text: String) throws(ParseError) -> Int64 {
        let bytes = Array(text.utf8)
        guard bytes.count <= maxLength else { throw ParseError(reason: "longer than \(maxLength) characters") }
        guard bytes.count == 20 || bytes.count == 25 else {
            throw ParseError(reason: "expected YYYY-MM-DDTHH:MM:SSZ or YYYY-MM-DDTHH:MM:SS+hh:mm")
        }
        func number(_ start: Int, _ length: Int, _ name: String) throws(ParseError) -> Int {
            var value = 0
            for byte in bytes[start..<(start + length)] {
                guard (0x30...0x39).contains(byte) else { throw ParseError(reason: "\(name) must be digits") }
                value = value * 10 + Int(byte - 0x30)
            }
            return value
        }
        func expect(_ index: Int, _ characters: String) throws(ParseError) {
            guard characters.utf8.contains(bytes[index]) else {
                throw ParseError(reason: "expected '\(characters)' at position \(index + 1)")
            }
        }
        try expect(4, "-"); try expect(7, "-"); try expect(10, "Tt"); try expect(13, ":"); try expect(16, ":")
        let year = try number(0, 4, "year"), month = try number(5, 2, "month"), day = try number(8, 2, "day")
        let hour = try number(11, 2, "hour"), minute = try number(14, 2, "minute"), second = try number(17, 2, "second")
        guard (1970...2106).contains(year) else { throw ParseError(reason: "year must be 1970 to 2106") }
        guard (1...12).contains(month) else { throw ParseError(reason: "month must be 01 to 12") }
        guard (1...daysIn(month: month, year: year)).contains(day) else { throw ParseError(reason: "day out of range for the month") }
        guard hour <= 23, minute <= 59, second <= 59 else { throw ParseError(reason: "time must be 00:00:00 to 23:59:59") }
        var offset = 0
        if bytes.count == 20 {
            try expect(19, "Zz")
        } else {
            try expect(19, "+-"); try expect(22, ":")
            let offsetHours = try number(20, 2, "offset hours"), offsetMinutes = try number(23, 2, "offset minutes")
            guard offsetHours <= 23, offsetMinutes <= 59 else { throw ParseError(reason: "offset must be at most 23:59") }
            offset = (offsetHours * 3600 + offsetMinutes * 60) * (bytes[19] == UInt8(ascii: "-") ? -1 : 1)
        }
        let days = daysFromCivil(year: year, month: month, day: day)
        return Int64(days) * 86_400 + Int64(hour * 3600 + minute * 60 + second) - Int64(offset)
    }

    /// "YYYY-MM-DDTHH:MM:SSZ" for seconds since 1970 (negative values print as 1970).
    public static func format(_ seconds: Int64) -> String {
        let clamped = max(0, seconds)
        let days = Int(clamped / 86_400), rest = Int(clamped % 86_400)
        let (year, month, day) = civilFromDays(days)
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(year)-\(two(month))-\(two(day))T\(two(rest / 3600)):\(two(rest / 60 % 60)):\(two(rest % 60))Z"
    }

    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Days since 1970-01-01 in the proleptic Gregorian calendar (H. Hinnant's algorithm).
    static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    static func civilFromDays(_ days: Int) -> (Int, Int, Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}
