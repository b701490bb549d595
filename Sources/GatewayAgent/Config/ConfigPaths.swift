// Path handling for settings: relative paths in a config file are taken from the file's folder.

enum ConfigPaths {
    static let maxLength = 4096

    /// The folder of `path` ("." for a bare file name).
    static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    /// `path` made absolute against `base` when relative; nil for an empty or unusable path.
    /// Trailing slashes are dropped so "DIR/" and "DIR" name the same state directory.
    static func resolve(_ path: String, against base: String) -> String? {
        guard !path.isEmpty, path.utf8.count <= maxLength, !path.utf8.contains(0) else { return nil }
        var joined = path.hasPrefix("/") || base == "." ? path : (base.hasSuffix("/") ? base + path : base + "/" + path)
        while joined.count > 1 && joined.hasSuffix("/") { joined.removeLast() }
        return joined
    }
}
