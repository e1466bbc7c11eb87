import FluxBusProtocol
import ZeroMQ

/// Floods a coordinator's ROUTER with hostile messages from one DEALER whose routing id the ROUTER chooses, keeping
/// only messages that the coordinator counts exactly once, and proves with barriers that it handled them all.
///
/// A barrier is a HELLO under a made-up worker id, which the coordinator refuses with a REJECT naming that id.
/// Messages from one connection are handled in order, so that REJECT means every message before the barrier was
/// handled. With a window, a barrier follows every `window` messages and the peer never runs more than two windows
/// ahead of the coordinator, which bounds what waits in the coordinator's receive queue.
struct FuzzPeer {
    let options: FuzzPeerOptions

    /// What was sent and heard.
    struct Summary {
        var sent: [Verdict: Int] = [:]
        var kinds: [HostileMessages.Kind: Int] = [:]
        /// Fuzz messages sent (barriers not included).
        var fuzzed = 0
        /// Candidates dropped because the coordinator would serve them or ignore them uncounted.
        var discarded = 0
        var replies: [String: Int] = [:]
        var barriers = 0
        /// The last barrier the coordinator answered.
        var answeredThrough = 0
        var seconds = 0.0

        var total: Int { sent.values.reduce(0, +) }
        var barrierAnswered: Bool { barriers > 0 && answeredThrough == barriers }
    }

    /// The start of every barrier's worker id; the barrier's number follows.
    var barrierPrefix: String { "fuzz-barrier-\(options.seed)-" }

    func run() throws -> Summary {
        let started = ContinuousClock.now
        let codec = Codec()
        let context = try ZMQContext(defaultLinger: .zero)
        let dealer = try ZMQSocket(.dealer, context: context)
        defer { dealer.close() }
        // No routing id: the ROUTER makes one up (a zero byte, then four), so it can be nobody else's.
        try dealer.set(.receiveHighWaterMark, to: 0)
        try dealer.connect(options.endpoint)

        var summary = Summary()
        func sendBarrier() throws {
            summary.barriers += 1
            let hello = Message.hello(.init(workerID: "\(barrierPrefix)\(summary.barriers)", instance: options.seed, stores: []))
            let frames = codec.encode(hello)
            precondition(Verdict.of(frames, codec: codec, epoch: options.epoch) == .refused)
            try dealer.send(frames)
            summary.sent[.refused, default: 0] += 1
        }
        /// Receives until barrier `number` is answered; false on timeout.
        func awaitBarrier(_ number: Int) throws -> Bool {
            let deadline = ContinuousClock.now.advanced(by: .seconds(options.barrierTimeoutSeconds))
            while summary.answeredThrough < number {
                let remaining = ContinuousClock.now.duration(to: deadline)
                guard remaining > .zero else { return false }
                if let reply = try dealer.receive(timeout: remaining) { note(reply, in: &summary) }
            }
            return true
        }

        var messages = HostileMessages(seed: options.seed, workerIDs: options.workerIDs, epoch: options.epoch)
        while summary.fuzzed < options.count {
            let (kind, frames) = messages.next()
            guard let verdict = Verdict.of(frames, codec: codec, epoch: options.epoch) else {
                summary.discarded += 1
                continue
            }
            try dealer.send(frames)
            summary.fuzzed += 1
            summary.sent[verdict, default: 0] += 1
            summary.kinds[kind, default: 0] += 1
            while let reply = try dealer.tryReceive() { note(reply, in: &summary) }
            if options.window > 0, summary.fuzzed % options.window == 0, summary.fuzzed < options.count {
                try sendBarrier()
                guard try awaitBarrier(summary.barriers - 1) else { break }
            }
        }
        try sendBarrier()
        _ = try awaitBarrier(summary.barriers)
        let elapsed = ContinuousClock.now - started
        summary.seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return summary
    }

    /// Tallies an answer by command, and notices a barrier's REJECT.
    private func note(_ reply: [[UInt8]], in summary: inout Summary) {
        // The coordinator sends what one burst of our messages caused together, as a BUNDLE.
        guard let messages = try? Codec().decodeAll(reply) else {
            summary.replies["undecodable", default: 0] += 1
            return
        }
        for message in messages { note(message, in: &summary) }
    }

    private func note(_ message: Message, in summary: inout Summary) {
        summary.replies[message.command.name, default: 0] += 1
        // "worker id `fuzz-barrier-SEED-N` differs from the connection's routing id …"
        guard case .reject(let reject) = message, let start = reject.reason.firstRange(of: "`\(barrierPrefix)") else { return }
        let number = reject.reason[start.upperBound...].prefix { $0.isNumber }
        if let number = Int(number) { summary.answeredThrough = max(summary.answeredThrough, number) }
    }
}

extension FuzzPeer.Summary {
    /// One JSON object, keys sorted: `barrier` (the last one answered), `barriers`, `count`, `discarded`, `kinds`,
    /// `replies`, `seconds`, `seed`, `sent` (per coordinator counter, barriers included), `total`.
    func json(seed: UInt64, count: Int) -> String {
        func object(_ pairs: [(String, Int)]) -> String {
            "{" + pairs.sorted { $0.0 < $1.0 }.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",") + "}"
        }
        let counters = Verdict.allCases.map { ($0.rawValue, sent[$0] ?? 0) }
        return "{\"barrier\":\(barrierAnswered),\"barriers\":\(barriers),\"count\":\(fuzzed),\"discarded\":\(discarded),"
            + "\"kinds\":\(object(kinds.map { ($0.key.rawValue, $0.value) })),\"replies\":\(object(Array(replies))),"
            + "\"seconds\":\(seconds),\"seed\":\(seed),\"sent\":\(object(counters)),\"total\":\(total)}"
    }
}
