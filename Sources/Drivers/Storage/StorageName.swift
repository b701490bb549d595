// The one rule for the short names the store keeps (record kinds, event kinds): 1 to 32
// characters of a-z, 0-9 and "-", so they are unambiguous in a seal's associated data and safe
// to print in messages and JSON without escaping.

enum StorageName {
    static func isValid(_ name: String) -> Bool {
        (1...32).contains(name.utf8.count) && name.utf8.allSatisfy { c in
            (c >= UInt8(ascii: "a") && c <= UInt8(ascii: "z")) || (c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9")) || c == UInt8(ascii: "-")
        }
    }
}
