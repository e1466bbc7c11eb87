import FluxBusProtocol

/// Where a log's high-water mark is kept: ``LogMark``, a file beside the SQLite log, or the simulated disk.
protocol LogMarkStore: AnyObject {
    /// The file, for messages.
    var path: String { get }
    /// The mark; nil when none was ever written (a new data directory).
    /// - Throws: ``LogMarkDamage`` when what is there is not a whole mark.
    func read() throws -> LogHighWater?
    /// Records the mark; `durably` also makes it reach the disk (when a bus is created or its mark reset).
    func write(_ mark: LogHighWater, durably: Bool) throws
}

/// A log's identity and continuity: its bus id, the chain value of its last entry, and the mark beside it that
/// records how far it had committed. Shared by the SQLite log and the simulated one, so both refuse alike.
final class LogIdentity {
    private(set) var busID: String
    /// The chain value after the last action appended (``appended(sequence:action:)``).
    private(set) var chainTail: UInt64 = 0
    private(set) var lastAppended: UInt64 = 0
    private let mark: (any LogMarkStore)?
    private var marked: UInt64 = 0

    /// - Parameter mark: nil for a log in memory, which starts a new bus every time.
    init(mark: (any LogMarkStore)?, newBusID: String) {
        self.mark = mark
        self.busID = newBusID
    }

    /// Checks the log against its mark when it is opened, and records the mark when the bus is new, the directory had
    /// none, or `newBus` says to go on from what the log holds.
    /// - Parameters:
    ///   - holding: what the log holds; `busID` nil when it has none (new, emptied, or missing).
    ///   - chainTail: the chain value of its last entry.
    ///   - logFile: the log's path, for the message.
    ///   - chainAt: the log's chain value at a sequence, nil when it does not hold that entry.
    ///   - recordBus: writes the bus id into a log that has none, before the mark names it.
    /// - Returns: a description of what was decided, for the coordinator's log.
    /// - Throws: ``BusError`` (`storage`) naming the file, the reason and the recovery procedure.
    func open(holding: LogContinuity.Holding, chainTail: UInt64, logFile: String, newBus: Bool,
              chainAt: (UInt64) throws -> UInt64?, recordBus: (String) throws -> Void) throws -> Decision {
        self.chainTail = chainTail
        lastAppended = holding.lastSequence
        marked = holding.lastSequence
        // An empty id: a log with actions from before bus ids, which gets one now.
        let hasID = !(holding.busID ?? "").isEmpty
        if hasID { busID = holding.busID! }
        guard let mark else {
            if !hasID { try recordBus(busID) }
            return .inMemory
        }
        var decision = Decision.created
        let recorded: LogHighWater?
        do {
            recorded = try mark.read()
        } catch let damage as LogMarkDamage {
            guard newBus else { throw BusError(code: .storage, message: damage.description) }
            // Nothing to compare the log with: --new-bus goes on from what it holds, and the mark is written anew.
            recorded = nil
            decision = .newBus("the mark \(damage.path) \(damage.reason)")
        }
        if let recorded {
            var holding = holding
            holding.chainAtMark = recorded.sequence > 0 ? try chainAt(recorded.sequence) : nil
            if let refusal = LogContinuity.refusal(mark: recorded, log: holding) {
                guard newBus else {
                    throw BusError(code: .storage, message: "cannot start from the log \(logFile): \(refusal) (\(mark.path) "
                        + "records bus \(recorded.busID) through #\(recorded.sequence)). " + LogContinuity.recovery)
                }
                decision = .newBus(refusal)
            } else {
                decision = .continued
            }
        } else if holding.busID != nil, decision == .created {
            decision = .adopted
        }
        if !hasID { try recordBus(busID) }
        try mark.write(LogHighWater(busID: busID, sequence: lastAppended, chain: chainTail), durably: true)
        return decision
    }

    enum Decision: Equatable {
        /// The log holds what its mark says.
        case continued
        /// A new data directory: a new bus.
        case created
        /// A log without a mark beside it (a restored backup, a log from before marks): its end is the mark now.
        case adopted
        /// `--new-bus` over a log that did not hold what its mark said: the reason.
        case newBus(String)
        case inMemory
    }

    /// The chain value of an action appended as `sequence`.
    func appended(sequence: UInt64, action: BatchAction) -> UInt64 {
        chainTail = LogChain.next(after: chainTail, sequence: sequence, action: action)
        lastAppended = sequence
        return chainTail
    }

    /// After a commit: moves the mark up to what was committed, without waiting for the disk.
    func committed() throws {
        guard let mark, lastAppended > marked else { return }
        try mark.write(LogHighWater(busID: busID, sequence: lastAppended, chain: chainTail), durably: false)
        marked = lastAppended
    }

    /// ``committed()``, a failure said as a storage error that names the log the mark lies beside.
    func committed(beside log: String?) throws {
        do {
            try committed()
        } catch let error as BusError {
            throw error
        } catch {
            throw BusError(code: .storage, message: "cannot write the log's mark beside \(log ?? "the log"): \(error)")
        }
    }
}
