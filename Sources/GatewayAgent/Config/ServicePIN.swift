// The service PIN that unlocks `actuate` on the serial console. A secret: it never appears in
// a description, an error or the `config` command's output, and is compared in constant time.
import Protocol

struct ServicePIN: Equatable, CustomStringConvertible {
    static let lengthRange = 6...12
    static let expectation = "a string of 6 to 12 decimal digits"

    private let digits: Bytes

    /// nil unless 6 to 12 ASCII digits (4 digits fell to guessing: issue 17, ServicePINLockout).
    init?(text: String) {
        let bytes = Array(text.utf8)
        guard Self.lengthRange.contains(bytes.count), bytes.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
        digits = bytes
    }

    /// True when `attempt` is the PIN. Constant time in the content; a wrong length is refused
    /// at once (the length range is public anyway).
    func matches(_ attempt: String) -> Bool {
        ConstantTime.equals(digits, Array(attempt.utf8))
    }

    var description: String { "(set)" }

    /// Equal PINs compare in constant time too (config reloads compare settings).
    static func == (lhs: ServicePIN, rhs: ServicePIN) -> Bool { ConstantTime.equals(lhs.digits, rhs.digits) }
}
