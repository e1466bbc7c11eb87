import Foundation
import FluxBusProtocol
import GRDB
import Logging
import Synchronization
import Testing

@testable import FluxBus

/// A read of the log that fails is not an empty answer. A batch's earlier actions were once answered "no longer in
/// the log" when their records could not be read, and an unknown outcome that a late report made known stayed
/// unknown without a word. Each test damages a committed row of a real SQLite log, so that decoding it fails.
@Suite("Reads of the log that fail")
struct LogReadFailureTests {
    static let action = BatchAction(actionType: "counter.add", payload: Array(#"{"by":1}"#.utf8))

    /// A log on disk holding #1 and #2 of request `r1`, both completed ok, and r1's answer: two actions of a batch (one
    /// row of `action_run`), or, not `batched`, two DISPATCHes of the same id (a row of `action` each).
    static func completedLog(in directory: URL, batched: Bool = true) throws -> ActionLog {
        let log = try ActionLog(directory: directory.path, sync: .off)
        _ = try log.recover()
        for sequence in UInt64(1)...2 {
            log.append(sequence: sequence, epoch: 1, action: action, origin: "test", requestID: "r1", batch: batched ? (1, 3) : nil,
                       fingerprint: 7)
            log.complete(ReplayEntry(
                epoch: 1, sequence: sequence, actionType: action.actionType, payload: action.payload, plan: [],
                outputs: [StoreOutput(store: "counter", status: .ok)]))
        }
        log.recordAnswer(.result(.init(requestID: "r1", epoch: 1, sequence: 1, elapsedMicros: 5, outcomes: [])), for: "r1", sequence: 1)
        try log.flush()
        // In SQLite's tables, for the tests to damage: the commit went to the journal.
        try log.applyJournal()
        return log
    }

    /// Runs `body` with an engine over a completed log, damaged by `sql` first when it is given, and what it logs.
    static func withEngine(damagedBy sql: String?, _ body: (CoordinatorEngine, LoggedLines) throws -> Void) throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("fluxbus-reads-\(UUID().uuidString.prefix(8))")
        defer { try? FileManager.default.removeItem(at: directory) }
        let log = try completedLog(in: directory)
        if let sql { try log.database.inDatabase { db in try db.execute(sql: sql) } }
        let lines = LoggedLines()
        let engine = CoordinatorEngine(
            configuration: CoordinatorConfiguration(controlEndpoint: "inproc://c", publishEndpoint: "inproc://p"),
            epoch: 2, log: log, recovered: LogRecovery(), controlEndpoint: "inproc://c", advertisedPublishEndpoint: "inproc://p",
            logger: Logger(label: "test", factory: { _ in CapturingLogHandler(lines: lines) }), now: .zero)
        try body(engine, lines)
    }

    /// Runs `body` with an engine started over a completed log, as a restarted coordinator is, the log damaged by
    /// `sql` first when it is given.
    static func withRestartedEngine(
        damagedBy sql: String?, batched: Bool = true, _ body: (CoordinatorEngine, LoggedLines) throws -> Void
    ) throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("fluxbus-reads-\(UUID().uuidString.prefix(8))")
        defer { try? FileManager.default.removeItem(at: directory) }
        do {
            let log = try completedLog(in: directory, batched: batched)
            if let sql { try log.database.inDatabase { db in try db.execute(sql: sql) } }
        }
        let log = try ActionLog(directory: directory.path, sync: .off)
        let recovered = try log.recover()
        let lines = LoggedLines()
        let engine = CoordinatorEngine(
            configuration: CoordinatorConfiguration(controlEndpoint: "inproc://c", publishEndpoint: "inproc://p"),
            epoch: recovered.lastEpoch + 1, log: log, recovered: recovered, controlEndpoint: "inproc://c",
            advertisedPublishEndpoint: "inproc://p",
            logger: Logger(label: "test", factory: { _ in CapturingLogHandler(lines: lines) }), now: .zero)
        try body(engine, lines)
    }

    /// What the engine sent `routingID`.
    static func answers(of engine: CoordinatorEngine, to routingID: [UInt8]) -> [Message] {
        engine.takeEffects().compactMap { effect -> Message? in
            guard case .send(let message, let destination) = effect, destination == routingID else { return nil }
            return message
        }
    }

    @Test("a batch's completed actions whose records cannot be read are unknown, and say why", arguments: [false, true])
    func recordedFailuresTellAnUnreadableLog(damaged: Bool) throws {
        try Self.withEngine(damagedBy: damaged ? "UPDATE outcome SET entry = x'ff00ff' WHERE sequence = 2" : nil) { engine, lines in
            let failures = engine.recordedFailures(1..<3)
            if damaged {
                #expect(failures.map(\.sequence) == [1, 2] && failures.allSatisfy { $0.outcome.status == .unknown })
                #expect(failures.allSatisfy { $0.outcome.message.contains("could not be read from the log") }, "\(failures)")
                #expect(lines.all.contains { $0.hasPrefix("error: cannot read the log to answer for a batch's actions") })
            } else {
                // Both completed ok: nothing to report, and nothing logged.
                #expect(failures.isEmpty, "\(failures)")
                #expect(lines.all.isEmpty)
            }
        }
    }

    @Test("an answer that cannot be read is not rewritten, and the failure is logged", arguments: [false, true])
    func anUnreadableAnswerIsReported(damaged: Bool) throws {
        try Self.withEngine(damagedBy: damaged ? "UPDATE request SET result = x'ff00ff' WHERE requestID = 'r1'" : nil) { engine, lines in
            let rewritten = engine.rewriteAnswer("r1", sequence: 1) { $0 }
            #expect(rewritten == !damaged)
            let logged = lines.all
            #expect(logged.contains { $0.hasPrefix("error: cannot read the log to rewrite a request's answer") } == damaged, "\(logged)")
        }
    }

    /// A retry whose id the log cannot read back is refused, not taken for a new request: once, a read error there
    /// meant "unknown id", and the retry was applied a second time.
    @Test("a request id the log cannot read back is refused, not dispatched again", arguments: [false, true])
    func anUnreadableRequestIDIsRefused(damaged: Bool) throws {
        try Self.withRestartedEngine(damagedBy: damaged ? "UPDATE request SET result = x'ff00ff' WHERE requestID = 'r1'" : nil) { engine, lines in
            let client = Array("client".utf8)
            let retry = Message.dispatch(.init(requestID: "r1", actionType: Self.action.actionType, payload: Self.action.payload))
            engine.handle(.message([client] + Codec().encode(retry), userID: nil), at: .zero)
            let answers = Self.answers(of: engine, to: client)
            guard case .error(let error)? = answers.first else { Issue.record("no ERROR: \(answers)"); return }
            #expect(engine.lastLogged == 2, "nothing dispatched again")
            if damaged {
                #expect(error.code == .internal && error.message.contains("cannot read its log"), "\(error)")
                #expect(lines.all.contains { $0.hasPrefix("error: cannot read the log to check whether a request id was applied before") })
            } else {
                // Read back, the log's r1 was logged with another fingerprint: the id is known, and refused as reused.
                #expect(error.code == .requestIDReused, "\(error)")
            }
        }
    }

    /// A client's FETCH that the log cannot answer gets an ERROR, not silence until its timeout.
    @Test("a client's FETCH the log cannot read is refused", arguments: [false, true])
    func anUnreadableFetchIsRefused(damaged: Bool) throws {
        try Self.withRestartedEngine(damagedBy: damaged ? "UPDATE outcome SET entry = x'ff00ff' WHERE sequence = 1" : nil) { engine, _ in
            let client = Array("tail".utf8)
            engine.handle(.message([client] + Codec().encode(.fetch(.init(epoch: 0, from: 1, to: 2))), userID: nil), at: .zero)
            let answers = Self.answers(of: engine, to: client)
            if damaged {
                guard case .error(let error)? = answers.first else { Issue.record("no ERROR: \(answers)"); return }
                #expect(error.code == .internal && error.message.contains("cannot read its log from #1"), "\(error)")
            } else {
                guard case .replay(let replay)? = answers.first else { Issue.record("no REPLAY: \(answers)"); return }
                #expect(replay.entries.map(\.sequence) == [1, 2])
            }
        }
    }

    /// A payload changed on disk after it was logged (bit rot that SQLite's own checks pass) no longer gives the chain
    /// value logged with it: the entry is not served, and a client's FETCH of it is refused. Served, it replayed as an
    /// action nobody sent (a probe: `{"by":1000}` written over a `{"by":1}`, and a joining replica's counter at 1004).
    /// #2's payload becomes `{"by":1000}` in the row of its batch's run (its own: the completion between the two
    /// actions starts a new run), its chain value kept: the row still reads as an action, but not as the one the chain
    /// was computed over.
    static var damagedRun: String {
        let changed = BatchAction(actionType: action.actionType, payload: Array(#"{"by":1000}"#.utf8))
        let chain = LogChain.next(after: LogChain.next(after: 0, sequence: 1, action: action), sequence: 2, action: action)
        let bytes = ActionRun.encoded([(changed, chain)])
        return "UPDATE action_run SET actions = X'\(bytes.map { String(format: "%02x", $0) }.joined())' WHERE first = 2"
    }

    @Test("an entry changed on disk after it was logged is not served", arguments: ["intact", "a batch's run", "a dispatch's row"])
    func anEntryThatDoesNotMatchItsChainIsNotServed(where damage: String) throws {
        let damaged = damage != "intact"
        let sql: String? = switch damage {
        case "a batch's run": Self.damagedRun
        case "a dispatch's row": #"UPDATE action SET payload = CAST('{"by":1000}' AS BLOB) WHERE sequence = 2"#
        default: nil
        }
        try Self.withRestartedEngine(damagedBy: sql, batched: damage != "a dispatch's row") { engine, _ in
            if damaged {
                // Both ways of reading entries check the chain: as values, and as the bytes FETCH serves.
                for error in [
                    #expect(throws: BusError.self) { _ = try engine.log.entries(in: 1...2, maximum: 10) },
                    #expect(throws: BusError.self) { _ = try engine.log.encodedEntries(in: 1...2, maximum: 10) },
                ] {
                    #expect(error?.code == .storage && error?.message.contains("entry #2 (`counter.add`) does not match its chain") == true,
                            "\(String(describing: error))")
                }
                // #1 is intact, and is still served.
                let intact = try engine.log.entries(in: 1...1, maximum: 10)
                #expect(intact.map(\.sequence) == [1])
                #expect(try engine.log.encodedEntries(in: 1...1, maximum: 10).decoded() == intact)
            } else {
                let both = try engine.log.entries(in: 1...2, maximum: 10)
                #expect(both.map(\.payload) == [Self.action.payload, Self.action.payload])
                // The rows spliced as bytes are the entries, encoded.
                #expect(try engine.log.encodedEntries(in: 1...2, maximum: 10) == EncodedEntries(both))
                #expect(try engine.log.encodedEntries(in: 2...2, maximum: 10).firstSequence == 2)
            }
            let client = Array("tail".utf8)
            engine.handle(.message([client] + Codec().encode(.fetch(.init(epoch: 0, from: 2, to: 2))), userID: nil), at: .zero)
            let answers = Self.answers(of: engine, to: client)
            if damaged {
                guard case .error(let error)? = answers.first else { Issue.record("no ERROR: \(answers)"); return }
                #expect(error.code == .internal && error.message.contains("does not match its chain"), "\(error)")
            } else {
                guard case .replay(let replay)? = answers.first else { Issue.record("no REPLAY: \(answers)"); return }
                #expect(replay.entries.map(\.sequence) == [2])
            }
        }
    }

    /// A worker whose history the log cannot be read to check is refused for now (REJECT 11, HELLO again later), not
    /// welcomed on its word: the simulator found a worker whose applied entry a power cut had lost welcomed that way,
    /// serving and acknowledging a state the bus did not hold. The read fails here because the column it reads is
    /// gone, renamed after the coordinator opened its log.
    @Test("a worker whose history the log cannot read is refused for now, not welcomed", arguments: [false, true])
    func anUnreadableHistoryRefusesTheWorkerForNow(damaged: Bool) throws {
        try Self.withRestartedEngine(damagedBy: nil) { engine, lines in
            let chain = try #require(try engine.log.loggedEntry(at: 2)).chain
            if damaged {
                try (engine.log as! ActionLog).database.inDatabase { db in
                    try db.execute(sql: "ALTER TABLE action RENAME COLUMN chain TO damaged_chain")
                }
            }
            let worker = Array("w1".utf8)
            let hello = Message.hello(.init(
                workerID: "w1", instance: 7, stores: [StoreDeclaration(name: "counter", handlesAll: false, handles: ["counter.add"], lastApplied: 2)],
                applied: 2, chain: chain, appliedEpoch: 1))
            engine.handle(.message([worker] + Codec().encode(hello), userID: nil), at: .zero)
            let answers = Self.answers(of: engine, to: worker)
            if damaged {
                guard case .reject(let reject)? = answers.first else { Issue.record("no REJECT: \(answers)"); return }
                #expect(reject.code == .logUnreadable && reject.reason.contains("cannot read its log to check worker `w1`"), "\(reject)")
                #expect(engine.membership.workers["w1"] == nil, "not registered")
                #expect(lines.all.contains { $0.hasPrefix("error: cannot read the log to check a joining worker's history") })
            } else {
                #expect(answers.contains { if case .welcome = $0 { true } else { false } }, "\(answers)")
            }
        }
    }
}

/// Every message logged, as "level: message".
final class LoggedLines: Sendable {
    private let lines = Mutex<[String]>([])
    init() {}
    var all: [String] { lines.withLock { $0 } }
    func append(_ line: String) { lines.withLock { $0.append(line) } }
}

/// Keeps what is logged in ``LoggedLines``.
struct CapturingLogHandler: LogHandler {
    let lines: LoggedLines
    var logLevel: Logger.Level = .trace
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        lines.append("\(event.level): \(event.message)")
    }
}
