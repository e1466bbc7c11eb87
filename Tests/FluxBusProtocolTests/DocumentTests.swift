import FluxBusProtocol
import Foundation
import Testing

/// Holds `docs/PROTOCOL.md` to the codec, so that the two cannot drift: the command table,
/// every message's and record's field table, the code tables, and the example bytes.
///
/// After a deliberate change to an example, regenerate the document's dumps with
/// `FLUXBUS_UPDATE_PROTOCOL_DOC=1 swift test --filter DocumentTests`.
@Suite("docs/PROTOCOL.md agrees with the codec")
struct DocumentTests {
    let document: ProtocolDocument

    init() throws {
        var document = try ProtocolDocument.load()
        if ProcessInfo.processInfo.environment["FLUXBUS_UPDATE_PROTOCOL_DOC"] == "1" {
            for (name, message) in Examples.documented {
                document = document.replacingExample(name, with: WireAnnotator.dump(message))
            }
            try document.text.write(toFile: ProtocolDocument.path, atomically: true, encoding: .utf8)
        }
        self.document = document
    }

    @Test("the command table lists exactly the codec's commands, in order")
    func commandTable() throws {
        let rows = try #require(document.table(after: "### Command table"))
        let documented = rows.map { "\($0[0]) \($0[1])" }
        let known = Command.allCases.map { command in
            let hex = String(command.rawValue, radix: 16, uppercase: true)
            return "0x\(hex.count == 1 ? "0" + hex : hex) \(command.name)"
        }
        #expect(documented == known)
    }

    @Test("each message's section gives the codec's fields, types and order", arguments: Command.allCases)
    func messageFields(_ command: Command) throws {
        let heading = document.headings(level: 3, inSection: "Messages")
            .first { $0.hasSuffix(" \(command.name)") && $0.hasPrefix("0x") }
        let title = try #require(heading, "no section for \(command)")
        let rows = try #require(document.table(after: "### \(title)"))
        #expect(rows.map { WireSchema.Row(field: $0[0], type: $0[1]) } == WireSchema.of(command).rows)
    }

    @Test("the Messages section has one heading per command and no other")
    func messageHeadings() {
        let headings = document.headings(level: 3, inSection: "Messages")
        #expect(headings == Command.allCases.map { command in
            let hex = String(command.rawValue, radix: 16, uppercase: true)
            return "0x\(hex.count == 1 ? "0" + hex : hex) \(command.name)"
        })
    }

    @Test("the Records section describes every list item type with the codec's fields")
    func recordFields() throws {
        var records: [String: [WireSchema.Row]] = [:]
        for command in Command.allCases {
            records.merge(WireSchema.of(command).records) { first, _ in first }
        }
        #expect(Set(document.headings(level: 3, inSection: "Records")) == Set(records.keys))
        for (name, fields) in records {
            let rows = try #require(document.table(after: "### \(name)"), "no table for \(name)")
            #expect(rows.map { WireSchema.Row(field: $0[0], type: $0[1]) } == fields, "record \(name)")
        }
    }

    @Test("the status and worker-state tables match the codec's values and names")
    func closedTables() throws {
        let statuses = try #require(document.table(after: "### Status codes"))
        #expect(statuses.map { "\($0[0]) \($0[1])" } == OutcomeStatus.allCases.map { "\($0.rawValue) \($0)" })
        let states = try #require(document.table(after: "### Worker states"))
        #expect(states.map { "\($0[0]) \($0[1])" } == WorkerState.allCases.map { "\($0.rawValue) \($0)" })
    }

    @Test("the REJECT and ERROR code tables match the codec's named codes")
    func openTables() throws {
        let rejects = try #require(document.table(after: "### REJECT codes"))
        #expect(rejects.map { "\($0[0]) \($0[1])" } == (1...rejects.count).map { "\($0) \(Message.Reject.Code(rawValue: UInt16($0)))" })
        #expect("\(Message.Reject.Code(rawValue: UInt16(rejects.count + 1)))".hasPrefix("code "), "a named REJECT code is missing")
        let errors = try #require(document.table(after: "### ERROR codes"))
        #expect(errors.map { "\($0[0]) \($0[1])" } == (1...errors.count).map { "\($0) \(Message.Error.Code(rawValue: UInt16($0)))" })
        #expect("\(Message.Error.Code(rawValue: UInt16(errors.count + 1)))".hasPrefix("code "), "a named ERROR code is missing")
    }

    @Test("the example exchanges are present, in order")
    func exampleNames() {
        #expect(document.exampleNames == Examples.documented.map(\.name))
    }

    @Test("each example's hex is exactly what the codec produces", arguments: Examples.documented.map(\.name))
    func exampleBytes(_ name: String) throws {
        let message = try #require(Examples.documented.first { $0.name == name }?.message)
        let block = try #require(document.example(name), "no block after <!-- example: \(name) -->")
        #expect(ProtocolDocument.frames(inDump: block) == Codec().encode(message))
        let expected = WireAnnotator.dump(message)
        #expect(block == expected, "regenerate with FLUXBUS_UPDATE_PROTOCOL_DOC=1; expected:\n\(expected)")
    }
}
