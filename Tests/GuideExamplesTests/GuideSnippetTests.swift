import Foundation
import Testing

/// Holds docs/GUIDE.md to the code it shows: every ```swift block in the guide is announced by
/// `<!-- snippet: NAME -->` and must equal, whitespace-normalised, the region `// guide:begin NAME` …
/// `// guide:end NAME` of a file in `Sources/GuideExamples`, `Sources/guide-worker`, `Package.swift` or the example
/// package `Examples/TodoSync` (which `make example` builds and runs); and every
/// region must appear in the guide. The examples themselves run in the other suites of this target.
///
/// After changing an example, rewrite the guide's blocks from the code with
/// `FLUXBUS_UPDATE_GUIDE=1 swift test --filter GuideSnippetTests`.
@Suite("docs/GUIDE.md shows the example code as it is")
struct GuideSnippetTests {
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let guidePath = root.appendingPathComponent("docs/GUIDE.md").path

    let guide: GuideDocument
    let regions: [String: Region]

    init() throws {
        let regions = try Self.loadRegions()
        self.regions = regions
        var guide = try GuideDocument(text: String(contentsOfFile: Self.guidePath, encoding: .utf8))
        if ProcessInfo.processInfo.environment["FLUXBUS_UPDATE_GUIDE"] == "1" {
            guide = guide.replacingSnippets { name in regions[name].map { $0.dedentedLines.joined(separator: "\n") } }
            try guide.text.write(toFile: Self.guidePath, atomically: true, encoding: .utf8)
        }
        self.guide = guide
    }

    /// Every region of the example sources, by name.
    static func loadRegions() throws -> [String: Region] {
        var files = [root.appendingPathComponent("Package.swift"), root.appendingPathComponent("Examples/TodoSync/Package.swift")]
        let todoSync = ["TodoStores", "todo-worker", "todo-client"].map { "Examples/TodoSync/Sources/\($0)" }
        for folder in ["Sources/GuideExamples", "Sources/guide-worker"] + todoSync {
            let directory = root.appendingPathComponent(folder)
            let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
            files += names.filter { $0.hasSuffix(".swift") }.map { directory.appendingPathComponent($0) }
        }
        var regions: [String: Region] = [:]
        for file in files {
            let relative = String(file.path.dropFirst(root.path.count + 1))
            for region in try Region.parse(String(contentsOf: file, encoding: .utf8), file: relative) {
                if let other = regions[region.name] {
                    throw SnippetError("region `\(region.name)` appears twice: in \(other.file) and \(region.file)")
                }
                regions[region.name] = region
            }
        }
        return regions
    }

    @Test("the example sources have regions, each opened and closed once")
    func regionsAreWellFormed() {
        #expect(regions.count >= 30, "found only \(regions.count) regions: \(regions.keys.sorted())")
        for region in regions.values {
            #expect(!region.lines.allSatisfy { $0.trimmingCharacters(in: .whitespaces).isEmpty }, "region `\(region.name)` is empty")
        }
    }

    @Test("every swift block in the guide names the region it shows")
    func everySwiftBlockIsASnippet() {
        #expect(guide.unnamedSwiftBlocks.isEmpty, "swift blocks with no `<!-- snippet: NAME -->` before them, at lines \(guide.unnamedSwiftBlocks)")
        #expect(guide.markersWithoutBlock.isEmpty, "snippet markers not followed by a ```swift block: \(guide.markersWithoutBlock)")
    }

    @Test("each snippet in the guide is its region of the code")
    func snippetsMatchTheirRegions() {
        for snippet in guide.snippets {
            guard let region = regions[snippet.name] else {
                Issue.record("the guide shows `\(snippet.name)` (line \(snippet.line)), but no source has that region")
                continue
            }
            #expect(
                Self.normalised(snippet.lines) == Self.normalised(region.lines),
                """
                the guide's `\(snippet.name)` (line \(snippet.line)) differs from \(region.file); \
                run FLUXBUS_UPDATE_GUIDE=1 swift test --filter GuideSnippetTests. The code says:
                \(region.dedentedLines.joined(separator: "\n"))
                """)
        }
    }

    @Test("every region of the code is shown in the guide, once")
    func everyRegionIsShown() {
        let shown = guide.snippets.map(\.name)
        #expect(Set(regions.keys).subtracting(shown).sorted() == [], "regions the guide does not show")
        let repeated = Dictionary(grouping: shown, by: { $0 }).filter { $0.value.count > 1 }.keys.sorted()
        #expect(repeated == [], "snippets shown more than once")
    }

    @Test("the normalisation ignores indentation and blank lines, and nothing else")
    func normalisation() {
        #expect(Self.normalised(["    let a = 1", "", "  let b = 2  "]) == Self.normalised(["let a = 1", "let b = 2"]))
        #expect(Self.normalised(["let a = 1"]) != Self.normalised(["let a = 2"]))
        #expect(Self.normalised(["let a = 1", "let b = 2"]) != Self.normalised(["let b = 2", "let a = 1"]))
    }

    /// Lines trimmed of surrounding whitespace, blank lines dropped.
    static func normalised(_ lines: [String]) -> [String] {
        lines.map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }
}

struct SnippetError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// One `// guide:begin NAME` … `// guide:end NAME` region. Regions may nest; marker lines never belong to one.
struct Region {
    let name: String
    let file: String
    var lines: [String] = []

    static let begin = "// guide:begin "
    static let end = "// guide:end "

    /// The lines with their common indentation removed, as the guide shows them.
    var dedentedLines: [String] {
        let indents = lines.filter { !$0.trimmingCharacters(in: .whitespaces).isEmpty }
            .map { $0.prefix { $0 == " " }.count }
        let cut = indents.min() ?? 0
        var result = lines.map { $0.trimmingCharacters(in: .whitespaces).isEmpty ? "" : String($0.dropFirst(cut)) }
        while result.first == "" { result.removeFirst() }
        while result.last == "" { result.removeLast() }
        return result
    }

    static func parse(_ text: String, file: String) throws -> [Region] {
        var open: [Region] = []
        var closed: [Region] = []
        for (number, line) in text.components(separatedBy: "\n").enumerated() {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix(begin) {
                open.append(Region(name: String(trimmed.dropFirst(begin.count)), file: file))
            } else if trimmed.hasPrefix(end) {
                let name = String(trimmed.dropFirst(end.count))
                guard let last = open.popLast(), last.name == name else {
                    throw SnippetError("\(file):\(number + 1): `guide:end \(name)` does not close the innermost open region")
                }
                closed.append(last)
            } else {
                for index in open.indices { open[index].lines.append(line) }
            }
        }
        if let unclosed = open.first { throw SnippetError("\(file): region `\(unclosed.name)` is never closed") }
        return closed
    }
}

/// docs/GUIDE.md, read for its snippets: `<!-- snippet: NAME -->`, then (blank lines allowed) a ```swift block.
struct GuideDocument {
    struct Snippet {
        let name: String
        /// The 1-based line of the marker.
        let line: Int
        /// The indices of the block's content lines in the document.
        let content: Range<Int>
        let lines: [String]
    }

    let text: String
    private(set) var snippets: [Snippet] = []
    private(set) var unnamedSwiftBlocks: [Int] = []
    private(set) var markersWithoutBlock: [String] = []

    static let marker = "<!-- snippet: "

    init(text: String) throws {
        self.text = text
        let lines = text.components(separatedBy: "\n")
        var pending: (name: String, line: Int)?
        var index = 0
        while index < lines.count {
            let line = lines[index].trimmingCharacters(in: .whitespaces)
            if line.hasPrefix(Self.marker), line.hasSuffix("-->") {
                if let pending { markersWithoutBlock.append(pending.name) }
                let name = line.dropFirst(Self.marker.count).dropLast(3).trimmingCharacters(in: .whitespaces)
                pending = (name, index + 1)
            } else if line.hasPrefix("```") {
                let language = line.dropFirst(3).trimmingCharacters(in: .whitespaces)
                let start = index + 1
                var close = start
                while close < lines.count, lines[close].trimmingCharacters(in: .whitespaces) != "```" { close += 1 }
                guard close < lines.count else { throw SnippetError("GUIDE.md:\(index + 1): a code block is never closed") }
                if language == "swift" {
                    if let marker = pending {
                        snippets.append(Snippet(
                            name: marker.name, line: marker.line, content: start..<close, lines: Array(lines[start..<close])))
                    } else {
                        unnamedSwiftBlocks.append(index + 1)
                    }
                } else if let pending {
                    markersWithoutBlock.append(pending.name)
                }
                pending = nil
                index = close
            } else if !line.isEmpty, let marker = pending {
                markersWithoutBlock.append(marker.name)
                pending = nil
            }
            index += 1
        }
        if let pending { markersWithoutBlock.append(pending.name) }
    }

    /// The document with each snippet's block replaced by `replacement(name)`, where that gives text.
    func replacingSnippets(_ replacement: (String) -> String?) -> GuideDocument {
        var lines = text.components(separatedBy: "\n")
        for snippet in snippets.reversed() {
            guard let new = replacement(snippet.name) else { continue }
            lines.replaceSubrange(snippet.content, with: new.components(separatedBy: "\n"))
        }
        return (try? GuideDocument(text: lines.joined(separator: "\n"))) ?? self
    }
}
