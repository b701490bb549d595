// Locates ../shared/testdata (or $OPENCARKEY_SHARED/testdata) and loads JSON vectors from it.
import FoundationEssentials
import XCTest

enum TestData {
    /// The shared folder beside the repository root, unless OPENCARKEY_SHARED points elsewhere.
    static var sharedDirectory: String {
        if let env = getenv("OPENCARKEY_SHARED") { return String(cString: env) }
        // #filePath is <root>/Tests/ProtocolTests/TestData.swift.
        var parts = "\(#filePath)".split(separator: "/", omittingEmptySubsequences: false)
        parts.removeLast(3)
        return parts.joined(separator: "/") + "/../shared"
    }

    /// Loads a vector file; a missing file fails the test rather than skipping it.
    static func load<T: Decodable>(_ relativePath: String, as type: T.Type) throws -> T {
        let path = sharedDirectory + "/testdata/" + relativePath
        guard let handle = fopen(path, "rb") else {
            XCTFail("test vectors missing: \(path)")
            throw MissingVectors(path: path)
        }
        defer { fclose(handle) }
        var bytes = [UInt8]()
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = fread(&chunk, 1, chunk.count, handle)
            if n <= 0 { break }
            bytes += chunk[0..<n]
        }
        return try JSONDecoder().decode(T.self, from: Data(bytes))
    }
}

extension Array where Element == UInt8 {
    /// Hex that must be valid in a test vector.
    init(testHex hex: String) {
        guard let bytes = [UInt8](hex: hex) else { fatalError("bad hex in test vector: \(hex)") }
        self = bytes
    }
}

struct MissingVectors: Error { let path: String }
