// Reads a linker map into bytes per input file: the GNU format (ld.bfd and gold, which the
// Swift driver uses on x86_64; `-Map=`) and the lld format (the aarch64 cross build). Only input
// sections placed in output sections the caller counts (those with bytes in the stripped file)
// are summed. The maps are written by our own build, but the reader is still bounded: lines
// it does not understand are skipped, never trusted for more than their own numbers.

struct LinkMapContribution: Equatable {
    /// The input file as the map names it: "/x/libcrypto.a(bn_lib.o)", "/x/Drivers.build/A.swift.o",
    /// or "" for bytes the linker made itself (merged .eh_frame, PLT, padding, <internal>).
    let file: String
    let outputSection: String
    let bytes: Int
}

enum LinkMapFormat: String { case gnu, lld }

enum LinkMapReader {
    /// The format of `text`, from its first lines.
    static func format(of text: Substring) -> LinkMapFormat? {
        for line in text.split(separator: "\n", maxSplits: 64, omittingEmptySubsequences: true).prefix(64) {
            let words = line.split(separator: " ")
            if words.first == "VMA", words.contains("Out"), words.contains("In") { return .lld }
            if line == "Memory map" || line.hasPrefix("Linker script and memory map") || line.hasPrefix("Archive member included") {
                return .gnu
            }
        }
        return nil
    }

    /// The pieces, and every output section's size as the map states it (to check the map
    /// belongs to the binary: its .text must be the binary's .text).
    static func contributions(_ text: Substring, counting: (String) -> Bool)
        -> (format: LinkMapFormat, pieces: [LinkMapContribution], outputSizes: [String: Int])? {
        var sizes: [String: Int] = [:]
        switch format(of: text) {
        case .gnu?: return (.gnu, gnu(text, counting: counting, outputSizes: &sizes), sizes)
        case .lld?: return (.lld, lld(text, counting: counting, outputSizes: &sizes), sizes)
        case nil: return nil
        }
    }

    // MARK: GNU (bfd, gold)

    /// After "Memory map" (gold) or "Linker script and memory map" (bfd): an output section
    /// starts in column 0 ("NAME ADDR SIZE", or NAME alone with ADDR SIZE on the next line);
    /// an input section is indented, "NAME ADDR SIZE FILE" (or NAME alone, then the numbers);
    /// gold's own pieces read "** fill ADDR SIZE", bfd's "*fill* ADDR SIZE"; symbol lines carry
    /// one number and a name and are skipped.
    static func gnu(_ text: Substring, counting: (String) -> Bool, outputSizes: inout [String: Int]) -> [LinkMapContribution] {
        var result: [LinkMapContribution] = []
        var inMemoryMap = false
        var section = ""
        var counted = false
        var headerPending = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if !inMemoryMap {
                inMemoryMap = line == "Memory map" || line.hasPrefix("Linker script and memory map")
                continue
            }
            guard let first = line.first else { continue }
            let words = line.split(separator: " ", omittingEmptySubsequences: true)
            guard !words.isEmpty else { continue }
            if first != " " && first != "\t" {
                // An output section, or bfd's LOAD / OUTPUT / assignment lines (no section).
                section = String(words[0])
                counted = section.hasPrefix(".") || section.hasPrefix("_") || section.first?.isLetter == true
                counted = counted && counting(section)
                headerPending = words.count == 1
                if words.count >= 3, isHex(words[1]), isHex(words[2]), let size = Int(words[2].dropFirst(2), radix: 16) {
                    outputSizes[section] = size
                }
                continue
            }
            guard let numberAt = words.firstIndex(where: isHex) else {
                headerPending = false
                continue
            }
            if headerPending {  // the numbers of an output section whose name stood alone
                headerPending = false
                if numberAt == 0, words.count >= 2, isHex(words[1]), let size = Int(words[1].dropFirst(2), radix: 16) {
                    outputSizes[section] = size
                }
                continue
            }
            guard counted, numberAt + 1 < words.count, isHex(words[numberAt + 1]),
                  let size = Int(words[numberAt + 1].dropFirst(2), radix: 16) else { continue }
            let file = words[(numberAt + 2)...].joined(separator: " ")
            // bfd prints a fill pattern after *fill*; that is no file.
            let named = words.first?.hasPrefix("*") == true ? "" : file
            if size > 0 { result.append(LinkMapContribution(file: named, outputSection: section, bytes: size)) }
        }
        return result
    }

    private static func isHex(_ word: Substring) -> Bool {
        word.count > 2 && word.hasPrefix("0x") && word.dropFirst(2).allSatisfy(\.isHexDigit)
    }

    // MARK: lld

    /// A header "VMA LMA Size Align Out In Symbol" (older lld: no LMA), then rows of right-
    /// aligned hex numbers followed by text whose column says what it is: under "Out" an output
    /// section, under "In" an input section "FILE:(SECTION)", further right a symbol.
    static func lld(_ text: Substring, counting: (String) -> Bool, outputSizes: inout [String: Int]) -> [LinkMapContribution] {
        var result: [LinkMapContribution] = []
        var numberColumns = 0
        var sizeIndex = 0
        var outColumn = 0
        var inColumn = 0
        var section = ""
        var counted = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
            let words = line.split(separator: " ", omittingEmptySubsequences: true)
            if numberColumns == 0 {
                guard words.first == "VMA", let out = words.firstIndex(of: "Out"), let sizeAt = words.firstIndex(of: "Size"),
                      let outWord = words.first(where: { $0 == "Out" }), let inWord = words.first(where: { $0 == "In" }) else { continue }
                numberColumns = out
                sizeIndex = sizeAt
                outColumn = line.distance(from: line.startIndex, to: outWord.startIndex)
                inColumn = line.distance(from: line.startIndex, to: inWord.startIndex)
                continue
            }
            guard words.count > numberColumns,
                  words[0..<numberColumns].allSatisfy({ $0.allSatisfy(\.isHexDigit) }),
                  let size = Int(words[sizeIndex], radix: 16) else { continue }
            let rest = words[numberColumns]
            let column = line.distance(from: line.startIndex, to: rest.startIndex)
            if column <= outColumn {
                section = String(rest)
                counted = counting(section)
                outputSizes[section] = size
            } else if column <= inColumn {
                guard counted, size > 0 else { continue }
                let entry = words[numberColumns...].joined(separator: " ")
                // "FILE:(SECTION)"; "<internal>:(...)" is the linker's own.
                var file = entry
                if let paren = entry.lastIndex(of: "("), paren > entry.startIndex,
                   entry[entry.index(before: paren)] == ":" {
                    file = String(entry[..<entry.index(before: paren)])
                }
                if file == "<internal>" { file = "" }
                result.append(LinkMapContribution(file: file, outputSection: section, bytes: size))
            }
        }
        return result
    }
}
