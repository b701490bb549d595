// Drivers is one module, so the compiler does not keep its folders apart. This test does: a
// folder may use another folder's types, but never both ways round (MQTT uses Storage's outbox
// types; Storage must not name an MQTT type, or the two could not be built or replaced apart).
import Foundation
import XCTest

final class FolderDependencyTests: XCTestCase {
    private static var driversRoot: String {
        // Tests/DriversTests/<this file> -> Sources/Drivers
        let parts = #filePath.split(separator: "/", omittingEmptySubsequences: false)
        return parts.dropLast(3).joined(separator: "/") + "/Sources/Drivers"
    }

    func testNoTwoDriverFoldersUseEachOther() throws {
        let folders = try SourceFolder.load(under: Self.driversRoot)
        XCTAssertGreaterThanOrEqual(folders.count, 6, "Drivers folders found: \(folders.map(\.name))")
        var edges: [String: [String: Set<String>]] = [:]
        for user in folders {
            for owner in folders where owner.name != user.name {
                let used = user.mentions(of: owner.declared.subtracting(user.local))
                if !used.isEmpty { edges[user.name, default: [:]][owner.name] = used }
            }
        }
        for (user, owners) in edges {
            for (owner, names) in owners where user < owner {
                guard let back = edges[owner]?[user] else { continue }
                XCTFail("\(user) and \(owner) use each other: \(user) names \(names.sorted().prefix(5)), "
                        + "\(owner) names \(back.sorted().prefix(5))")
            }
        }
    }

    func testStorageNamesNoTypeOfTheCloudLink() throws {
        let folders = try SourceFolder.load(under: Self.driversRoot)
        let mqtt = try XCTUnwrap(folders.first { $0.name == "MQTT" })
        let storage = try XCTUnwrap(folders.first { $0.name == "Storage" })
        XCTAssertTrue(mqtt.declared.contains("CloudLink"))
        XCTAssertTrue(storage.declared.contains("OutboxMessage"), "the outbox types belong to Storage")
        XCTAssertEqual(storage.mentions(of: mqtt.declared.subtracting(storage.local)), [])
    }

    /// The scanner itself: a name in a comment or a string is not a use; a name in code is.
    func testTheScannerSeesCodeButNotCommentsOrStrings() {
        let folder = SourceFolder(name: "X", declared: [], local: [], code: [SourceFolder.stripCommentsAndStrings("""
            // CloudLink is mentioned here
            let text = "CloudLink"
            let link: MQTTEndpoint? = nil
            """)])
        XCTAssertEqual(folder.mentions(of: ["CloudLink", "MQTTEndpoint"]), ["MQTTEndpoint"])
    }
}

/// One folder of Sources/Drivers: the top-level names it declares, every name it declares at any
/// depth (a nested `Connection` shadows another folder's), and its code without comments and
/// string literals.
struct SourceFolder {
    let name: String
    let declared: Set<String>
    let local: Set<String>
    let code: [String]

    static func load(under root: String) throws -> [SourceFolder] {
        let fileManager = FileManager.default
        return try fileManager.contentsOfDirectory(atPath: root).sorted().compactMap { name in
            var isDirectory: ObjCBool = false
            guard fileManager.fileExists(atPath: root + "/" + name, isDirectory: &isDirectory), isDirectory.boolValue else { return nil }
            var declared = Set<String>()
            var local = Set<String>()
            var code: [String] = []
            let enumerator = fileManager.enumerator(atPath: root + "/" + name)
            while let relative = enumerator?.nextObject() as? String {
                guard relative.hasSuffix(".swift") else { continue }
                let text = try String(contentsOfFile: root + "/" + name + "/" + relative, encoding: .utf8)
                declared.formUnion(declarations(in: text, nested: false))
                local.formUnion(declarations(in: text, nested: true))
                code.append(stripCommentsAndStrings(text))
            }
            return SourceFolder(name: name, declared: declared, local: local, code: code)
        }
    }

    /// Types and free functions declared at the start of a line (`nested`: at any indentation).
    /// Functions only with a camel-case name: `read` or `messages` would match every folder.
    static func declarations(in text: String, nested: Bool) -> Set<String> {
        let modifiers: Set<String> = ["public", "internal", "fileprivate", "private", "final", "indirect", "package"]
        let kinds: Set<String> = ["struct", "enum", "class", "protocol", "typealias", "actor", "func"]
        var names = Set<String>()
        for line in text.split(separator: "\n") where nested || !line.hasPrefix(" ") {
            let words = line.split(whereSeparator: { !($0.isLetter || $0.isNumber || $0 == "_") }).map(String.init)
            var index = 0
            while index < words.count, modifiers.contains(words[index]) { index += 1 }
            guard index + 1 < words.count, kinds.contains(words[index]) else { continue }
            let name = words[index + 1]
            if words[index] != "func" || name.contains(where: \.isUppercase) { names.insert(name) }
        }
        return names
    }

    static func stripCommentsAndStrings(_ text: String) -> String {
        text.split(separator: "\n", omittingEmptySubsequences: false).map { line -> String in
            var out = ""
            var inString = false
            var previous: Character = " "
            for character in line {
                if !inString && character == "/" && previous == "/" { out.removeLast(); break }
                if character == "\"" && previous != "\\" { inString.toggle(); previous = character; continue }
                if !inString { out.append(character) }
                previous = character
            }
            return out
        }.joined(separator: "\n")
    }

    /// Which of `names` occur as whole identifiers in the code.
    func mentions(of names: Set<String>) -> Set<String> {
        var found = Set<String>()
        for text in code {
            let words = Set(text.split(whereSeparator: { !($0.isLetter || $0.isNumber || $0 == "_") }).map(String.init))
            found.formUnion(names.intersection(words))
        }
        return found
    }
}
