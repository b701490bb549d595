// The board file: which GPIO lines the gateway drives and reads, and the timing it uses.

public struct BoardDescription: Sendable, Equatable {
    /// Allowed ranges, checked when a file is parsed and again where the values are used.
    public static let pulseWidthRange: ClosedRange<UInt64> = 10...1000
    public static let debounceRange: ClosedRange<UInt64> = 0...1000
    public static let pairingHoldRange: ClosedRange<UInt64> = 1000...30_000
    public static let feedbackSettleRange: ClosedRange<UInt64> = 0...2000

    /// Board files are small; a cap keeps a wrong path (a log, a device) from being slurped.
    public static let maxFileBytes = 64 * 1024

    public var name: String
    public var outputs: [OutputRole: GPIOLineConfig]
    public var inputs: [InputRole: GPIOLineConfig]
    /// How long lock, unlock and trunk release are held active.
    public var pulseWidthMillis: UInt64
    /// How long an input must be stable before a change counts.
    public var debounceMillis: UInt64
    /// How long the pairing button must be held to open the pairing window.
    public var pairingHoldMillis: UInt64
    /// Wait after a lock/unlock pulse before reading the lock-state feedback (switch travel).
    public var feedbackSettleMillis: UInt64
    /// The UWB module, when the board has one.
    public var uwb: BoardUWB?

    public init(name: String, outputs: [OutputRole: GPIOLineConfig], inputs: [InputRole: GPIOLineConfig],
                pulseWidthMillis: UInt64, debounceMillis: UInt64 = 30, pairingHoldMillis: UInt64 = 5000,
                feedbackSettleMillis: UInt64 = 100, uwb: BoardUWB? = nil) {
        self.name = name
        self.outputs = outputs
        self.inputs = inputs
        self.pulseWidthMillis = pulseWidthMillis
        self.debounceMillis = debounceMillis
        self.pairingHoldMillis = pairingHoldMillis
        self.feedbackSettleMillis = feedbackSettleMillis
        self.uwb = uwb
    }

    /// Reads and validates a board file.
    public static func load(path: String) throws(BoardDescriptionError) -> BoardDescription {
        let bytes: [UInt8]
        do {
            bytes = try Files.read(path, limit: maxFileBytes)
        } catch let error as Errno {
            throw .unreadable(path: path, reason: error.description)
        } catch {
            throw .unreadable(path: path, reason: "\(error)")
        }
        return try parse(bytes)
    }

    /// Validates board-file JSON. Every error names the key it is about.
    public static func parse(_ bytes: [UInt8]) throws(BoardDescriptionError) -> BoardDescription {
        guard bytes.count <= maxFileBytes else {
            throw .malformedJSON(reason: "larger than \(maxFileBytes) bytes")
        }
        let root = try BoardJSON.parseBoard(bytes).get()
        return try BoardFileReader.board(from: root)
    }
}
