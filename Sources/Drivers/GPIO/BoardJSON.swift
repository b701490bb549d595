// Board files are decoded into a JSONTree and validated by BoardFileReader.

typealias BoardJSON = JSONTree

extension JSONTree {
    static func parseBoard(_ bytes: [UInt8]) -> Result<JSONTree, BoardDescriptionError> {
        decode(bytes).mapError { .malformedJSON(reason: $0.reason) }
    }
}
