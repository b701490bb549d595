// The README's shell blocks as the tests run them: read from README.md itself, so a test cannot
// drift from the text a reader follows.
import XCTest

enum ReadmeBlocks {
    /// The ```sh block right after the paragraph that contains `marker`.
    static func block(after marker: String, in readme: String) throws -> String {
        let tail = try XCTUnwrap(readme.components(separatedBy: marker).dropFirst().first, "no '\(marker)' in README.md")
        let opened = try XCTUnwrap(tail.components(separatedBy: "```sh\n").dropFirst().first, "no ```sh block after '\(marker)'")
        return try XCTUnwrap(opened.components(separatedBy: "\n```").first)
    }
}
