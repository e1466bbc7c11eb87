import Foundation

/// `docs/PROTOCOL.md`, read for the parts the tests hold against the codec: headings, the
/// tables under them, and the example blocks marked `<!-- example: NAME -->`.
struct ProtocolDocument {
    static let path: String = {
        // Tests/FluxBusProtocolTests/Support/ProtocolDocument.swift → the package root.
        var components = "\(#filePath)".split(separator: "/", omittingEmptySubsequences: false)
        components.removeLast(4)
        return (components + ["docs", "PROTOCOL.md"]).joined(separator: "/")
    }()

    var text: String
    var lines: [String] { text.components(separatedBy: "\n") }

    static func load() throws -> ProtocolDocument {
        ProtocolDocument(text: try String(contentsOfFile: path, encoding: .utf8))
    }

    /// The headings of `level` (2 for `##`, 3 for `###`) between the `##` heading that starts
    /// with `section` and the next `##` heading, without their hashes.
    func headings(level: Int, inSection section: String) -> [String] {
        let marker = String(repeating: "#", count: level) + " "
        var inside = false
        var found: [String] = []
        for line in lines {
            if line.hasPrefix("## ") { inside = line.dropFirst(3).hasPrefix(section) }
            if inside, line.hasPrefix(marker) { found.append(String(line.dropFirst(marker.count))) }
        }
        return found
    }

    /// The body rows of the first table after the heading `heading` (exactly, hashes included),
    /// each as its cells with surrounding spaces and backticks removed; nil when absent.
    func table(after heading: String) -> [[String]]? {
        let all = lines
        guard let start = all.firstIndex(of: heading) else { return nil }
        let rows = all[(start + 1)...]
            .drop { !$0.hasPrefix("|") }
            .prefix { $0.hasPrefix("|") }
            .dropFirst(2)  // header and separator
        return rows.map { row in
            row.split(separator: "|", omittingEmptySubsequences: false).dropFirst().dropLast().map {
                $0.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: "`", with: "")
            }
        }
    }

    /// The content of the fenced block that follows the line `marker`.
    func block(after marker: String) -> String? {
        let all = lines
        guard let start = all.firstIndex(of: marker), start + 1 < all.count, all[start + 1].hasPrefix("```"),
              let end = all[(start + 2)...].firstIndex(where: { $0.hasPrefix("```") })
        else { return nil }
        return all[(start + 2)..<end].joined(separator: "\n")
    }

    /// The example names, in document order.
    var exampleNames: [String] {
        lines.compactMap(Self.exampleName)
    }

    private static func exampleName(_ line: String) -> String? {
        guard line.hasPrefix("<!-- example: "), line.hasSuffix(" -->") else { return nil }
        return String(line.dropFirst("<!-- example: ".count).dropLast(" -->".count))
    }

    /// The content of the fenced block that follows the marker of example `name`.
    func example(_ name: String) -> String? {
        guard let range = exampleRange(name) else { return nil }
        return lines[range].joined(separator: "\n")
    }

    /// The line range of the fenced block's content after example `name`'s marker.
    private func exampleRange(_ name: String) -> Range<Int>? {
        let all = lines
        guard let marker = all.firstIndex(where: { Self.exampleName($0) == name }),
              marker + 1 < all.count, all[marker + 1].hasPrefix("```"),
              let end = all[(marker + 2)...].firstIndex(where: { $0.hasPrefix("```") })
        else { return nil }
        return (marker + 2)..<end
    }

    /// This document with example `name`'s block replaced by `content`.
    func replacingExample(_ name: String, with content: String) -> ProtocolDocument {
        guard let range = exampleRange(name) else { return self }
        var all = lines
        all.replaceSubrange(range, with: content.components(separatedBy: "\n"))
        return ProtocolDocument(text: all.joined(separator: "\n"))
    }

    /// The frames an annotated dump shows: the hex before the label column of each line.
    static func frames(inDump dump: String) -> [[UInt8]] {
        var frames: [[UInt8]] = []
        for line in dump.components(separatedBy: "\n") {
            if line.hasPrefix("frame ") {
                frames.append([])
                continue
            }
            let hex = line.prefix(48).split(separator: " ")
            frames[frames.count - 1] += hex.compactMap { UInt8($0, radix: 16) }
        }
        return frames
    }
}
