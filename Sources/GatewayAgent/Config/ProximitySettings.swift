// The config file's "proximity" object: what distance decides (docs/protocol.md 19; the
// defaults are ProximityConfiguration's). Only used when the car has a UWB module.
import Protocol

struct ProximitySettings: Equatable {
    static let keys: Set<String> = ["unlockZoneMetres", "validRounds", "freshMillis", "walkAwaySeconds", "passiveEntry"]
    static let validRoundsRange: ClosedRange<Int64> = 1...20
    static let freshRange: ClosedRange<Int64> = 100...5000
    /// 0 turns walk-away lock off.
    static let walkAwayRange: ClosedRange<Int64> = 0...3600

    /// The Unlock zone's edge in centimetres (exact in JSON); 50 to 300.
    var unlockZoneCentimetres: Int64 = 150
    var validRounds = 3
    var freshMillis = 500
    var walkAwaySeconds = 10
    var passiveEntry = true

    static func read(_ object: ConfigReader) throws(ConfigError) -> ProximitySettings {
        var settings = ProximitySettings()
        if object.has("unlockZoneMetres") {
            let metres: Double?
            switch object.fields["unlockZoneMetres"] {
            case .number(let value)?: metres = value
            case .integer(let value)?: metres = Double(value)
            default: metres = nil
            }
            guard let metres, metres.isFinite, (0.5...3.0).contains(metres) else {
                throw .invalidValue(key: object.key("unlockZoneMetres"), expected: "a distance in metres from 0.5 to 3.0")
            }
            settings.unlockZoneCentimetres = Int64((metres * 100).rounded())
        }
        settings.validRounds = try object.integer("validRounds", in: validRoundsRange) ?? settings.validRounds
        settings.freshMillis = try object.integer("freshMillis", in: freshRange) ?? settings.freshMillis
        settings.walkAwaySeconds = try object.integer("walkAwaySeconds", in: walkAwayRange) ?? settings.walkAwaySeconds
        if object.has("passiveEntry") {
            guard case .bool(let on)? = object.fields["passiveEntry"] else {
                throw .invalidValue(key: object.key("passiveEntry"), expected: "true or false")
            }
            settings.passiveEntry = on
        }
        return settings
    }

    /// The engine's configuration with these decisions applied.
    var configuration: ProximityConfiguration {
        var configuration = ProximityConfiguration()
        configuration.unlockMetres = Double(unlockZoneCentimetres) / 100
        configuration.requiredConsecutiveValidRounds = validRounds
        configuration.authorizationFreshMillis = UInt64(freshMillis)
        configuration.walkAwayDelayMillis = UInt64(walkAwaySeconds) * 1000
        return configuration
    }
}
