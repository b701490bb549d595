// Builds the new config file from the current one and a cloud document. The document is the
// complete desired state of the cloud-managed keys (ConfigKeyPolicy.managed): those are first
// removed from the current file, then the document's are put in. Everything else (identity,
// paths, keys, the broker) is carried over from the local file untouched.
import Drivers

enum ConfigMerge {
    static func merge(current: JSONTree, document: JSONTree) -> JSONTree {
        var merged = current
        for entry in ConfigKeyPolicy.managed { remove(entry.split(separator: ".").map(String.init), from: &merged) }
        for key in ConfigKeyPolicy.leafKeys(document) {
            let path = key.split(separator: ".").map(String.init)
            if let value = lookup(path, in: document) { insert(value, at: path, into: &merged) }
        }
        return merged
    }

    static func lookup(_ path: [String], in tree: JSONTree) -> JSONTree? {
        guard let first = path.first else { return tree }
        guard case .object(let fields) = tree, let child = fields[first] else { return nil }
        return lookup(Array(path.dropFirst()), in: child)
    }

    private static func remove(_ path: [String], from tree: inout JSONTree) {
        guard let first = path.first, case .object(var fields) = tree, var child = fields[first] else { return }
        if path.count == 1 {
            fields[first] = nil
        } else {
            remove(Array(path.dropFirst()), from: &child)
            fields[first] = child
        }
        tree = .object(fields)
    }

    private static func insert(_ value: JSONTree, at path: [String], into tree: inout JSONTree) {
        guard let first = path.first else { tree = value; return }
        guard case .object(var fields) = tree else { return }  // the top level is always an object
        var child = fields[first] ?? .object([:])
        if path.count > 1, case .object = child {} else if path.count > 1 { child = .object([:]) }
        insert(value, at: Array(path.dropFirst()), into: &child)
        fields[first] = child
        tree = .object(fields)
    }
}
