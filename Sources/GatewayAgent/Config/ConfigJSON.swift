// The config file is decoded into a JSONTree and validated by ConfigReader.
import Drivers

typealias ConfigJSON = JSONTree

extension JSONTree {
    static func parseConfig(_ bytes: [UInt8]) throws(ConfigError) -> JSONTree {
        switch decode(bytes) {
        case .success(let tree): return tree
        case .failure(let failure): throw .malformedJSON(reason: failure.reason)
        }
    }
}
