import FluxBus
import FluxBusProtocol
import FluxBusTools
import FluxStores
import Foundation
import Testing

/// `docs/JSON.md` documents every field of the CLI's JSON. Each table must list exactly the paths the view prints for
/// a sample with every optional field present: a field added to a view and not to the page fails here.
@Suite("docs/JSON.md lists every field the CLI prints")
struct JSONDocumentTests {
    static let page = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("docs/JSON.md")

    static let outcomes: [Outcome] = [
        .init(store: "counter", worker: "w1", status: .failed, message: "boom", digest: 7),
        .init(store: "counter", worker: "", status: .unknown, message: "no live replica", digest: 0),
    ]

    @Test func dispatchJSON() throws {
        let result = DispatchResult(.init(requestID: "r", epoch: 1, sequence: 2, elapsedMicros: 3, outcomes: Self.outcomes))
        try Self.expect(section: "fluxbus dispatch TYPE PAYLOAD --json", documents: ResultView.json(result))
    }

    @Test func statusJSON() throws {
        let status = Message.Status(
            requestID: "s", epoch: 1, sequence: 9, queueLength: 1, publishEndpoint: "ipc:///p",
            workers: [.init(id: "w1", state: .live, stores: ["counter"], lastApplied: 8, heartbeatAgeMillis: 5)],
            stores: [.init(name: "counter", dependsOn: ["a"], handlesAll: false, handles: ["counter.add"], waitingFor: ["a"],
                           divergedAt: 4, replicas: [.init(worker: "w1", lastApplied: 8, digest: 3)], snapshotSequence: 2,
                           poisonedCount: 1, lastPoisoned: 5, crashingAt: 7, crashCount: 2, historyFrom: 1, historyBefore: 3)],
            logPath: "/data/log.sqlite", logSync: "always", logOldest: 1, logLast: 9, retain: 10)
        try Self.expect(section: "fluxbus status --json", documents: StatusView.json(status))
    }

    @Test func graphJSON() throws {
        let graph = Message.Graph(requestID: "g", stores: [.init(name: "a", dependsOn: [], handlesAll: true, handles: [], replicas: 1)])
        try Self.expect(section: "fluxbus graph --format json", documents: GraphView.json(graph))
    }

    @Test func tailJSON() throws {
        let completed = Message.Completed(epoch: 1, sequence: 2, actionType: "t", elapsedMicros: 3, outcomes: Self.outcomes)
        try Self.expect(section: "fluxbus tail --json", documents: TailView.json(completed))
    }

    @Test func watchJSON() throws {
        let state = Message.State(
            requestID: "r", store: "counter", worker: "w1", sequence: 3, digest: 7, size: 2, checksum: 0, state: Array("42".utf8))
        let line = try WatchView.json(state)
        try Self.expect(section: "fluxbus watch STORE --json", documents: try JSONDecoder().decode(JSONValue.self, from: Data(line.utf8)))
    }

    /// The table under `## \`SECTION\`` lists exactly the paths of `value` printed as JSON.
    static func expect(section: String, documents value: some Encodable, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let documented = try Self.documentedPaths(section)
        // An array's elements are described by their fields (`a[].b`); a row for `a[]` itself is optional.
        let printed = Self.paths(of: try JSONSerialization.jsonObject(with: try JSONEncoder().encode(value)), at: "", documented: documented)
            .filter { !$0.hasSuffix("[]") || documented.contains($0) }
        let difference = "printed but not documented: \(printed.subtracting(documented).sorted()); "
            + "documented but not printed: \(documented.subtracting(printed).sorted())"
        #expect(printed == documented, "\(difference)", sourceLocation: sourceLocation)
    }

    /// The first column of the section's first table, backticks removed.
    static func documentedPaths(_ section: String) throws -> Set<String> {
        let text = try String(contentsOf: page, encoding: .utf8)
        let start = try #require(text.range(of: "## `\(section)`"), "no section `\(section)` in docs/JSON.md")
        var paths: Set<String> = []
        var inTable = false
        for line in text[start.upperBound...].split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("## ") { break }
            if line.hasPrefix("| `") {
                inTable = true
                paths.insert(String(line.dropFirst(3).prefix { $0 != "`" }))
            } else if inTable, !line.hasPrefix("|") {
                break
            }
        }
        return paths
    }

    /// Every path in a parsed JSON value: objects' keys, arrays' `[]`, and, where the page documents `PATH.<name>`,
    /// the keys of the object at PATH as that placeholder.
    static func paths(of value: Any, at path: String, documented: Set<String>) -> Set<String> {
        var found: Set<String> = path.isEmpty ? [] : [path]
        if let object = value as? [String: Any] {
            let prefix = path.isEmpty ? "" : path + "."
            let placeholder = documented.first { $0.hasPrefix(prefix + "<") && !$0.dropFirst(prefix.count).contains(".") }
            for (key, child) in object {
                found.formUnion(paths(of: child, at: placeholder ?? (prefix + key), documented: documented))
            }
        } else if let array = value as? [Any] {
            for child in array where !(child is String || child is NSNumber) {
                found.formUnion(paths(of: child, at: path + "[]", documented: documented))
            }
        }
        return found
    }
}
