// Random (version 4) UUIDs for events, from the injected random source.
import Protocol

public enum UUIDv4 {
    public static func make(random: RandomSource = SystemRandom()) throws -> String {
        var bytes = try random.randomBytes(16)
        bytes[6] = (bytes[6] & 0x0f) | 0x40 // version 4
        bytes[8] = (bytes[8] & 0x3f) | 0x80 // RFC 4122 variant
        let hex = bytes.hexString
        let cuts = [8, 12, 16, 20]
        var out = ""
        for (index, character) in hex.enumerated() {
            if cuts.contains(index) { out.append("-") }
            out.append(character)
        }
        return out
    }
}
