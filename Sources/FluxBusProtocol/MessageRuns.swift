/// Runs of alike messages, both ways: a sender joins consecutive ACTIONs, ACKs and COMPLETEDs into ACTIONS, ACKS and
/// COMPLETIONS (``join(_:maxItems:maxBytes:)``), and a receiver hands a run on as the messages it stands for
/// (``Message/appendExpanded(to:)``, which ``Codec/decodeAll(_:)`` calls). Nothing else changes: the receiver handles
/// exactly the messages the sender joined, in their order.
package enum MessageRuns {
    /// `messages` with each stretch of two or more alike messages of consecutive sequences joined into one run of at
    /// most `maxItems` messages and about `maxBytes` bytes; every other message as it was, in its place.
    package static func join(_ messages: consuming [Message], maxItems: Int, maxBytes: Int) -> [Message] {
        var joiner = Joiner(maxItems: maxItems, maxBytes: maxBytes)
        for index in messages.indices { joiner.add(messages[index]) }
        return joiner.take()
    }

    /// What an ACTION adds to a run's size, as the limit on a run's bytes counts it.
    package static func size(of action: Message.Action) -> Int {
        action.payload.count + (action.error?.utf8.count ?? 0) + 8
    }

    /// The run being built: the message that started it, alone until a second one joins; then the run's shared
    /// fields, its growing lists kept apart (in ``Joiner``) so that appending to them never copies them.
    private enum Open {
        case none
        case single(Message)
        case actions(Message.Actions)
        case acks(Message.Acks)
        case completions(Message.Completions)
    }

    /// Joins messages into runs as they come: what ``join(_:maxItems:maxBytes:)`` does, one message at a time, so that
    /// an engine's outbox never holds the thousand messages a batch's run stands for.
    package struct Joiner {
        let maxItems: Int
        let maxBytes: Int
        private var out: [Message] = []
        private var open = Open.none
        private var items = 0
        private var bytes = 0
        /// The open run's entries (ACTIONS), digests (ACKS, COMPLETIONS) and times (COMPLETIONS).
        private var entries: [ActionEntry] = []
        private var digests: [UInt8] = []
        private var times: [UInt8] = []

        package init(maxItems: Int, maxBytes: Int) {
            self.maxItems = maxItems
            self.maxBytes = maxBytes
        }

        /// The messages and runs so far, the open run closed; the joiner starts empty again.
        package mutating func take() -> [Message] {
            close()
            defer { out = [] }
            return out
        }

        package mutating func add(_ message: consuming Message) {
            // A first message waits as it is, unexamined: most destinations get one per burst (a lock-step dispatch's
            // ACTION, its COMPLETED, its RESULT), and only a second can make a run.
            if case .none = open {
                open = .single(message)
                items = 1
                bytes = -1
                return
            }
            switch message {
            case .action(let action): add(action, message)
            case .ack(let ack) where ack.timings.isEmpty && !ack.results.isEmpty: add(ack, message)
            case .completed(let completed): add(completed, message)
            default:
                close()
                out.append(message)
            }
        }

        /// Ends the run being built: a run of one goes as the message it was.
        private mutating func close() {
            switch open {
            case .none: return
            case .single(let message): out.append(message)
            case .actions(var run):
                run.entries = entries
                out.append(.actions(run))
            case .acks(var run):
                run.count = UInt32(items)
                run.digests = digests
                out.append(.acks(run))
            case .completions(var run):
                run.count = UInt32(items)
                run.elapsedMicros = times
                run.digests = digests
                out.append(.completions(run))
            }
            open = .none
            entries = []
            digests = []
            times = []
        }

        private mutating func fits(_ more: Int) -> Bool {
            if bytes < 0, case .single(let first) = open { bytes = Self.size(of: first) }
            return items < maxItems && bytes + more <= maxBytes
        }

        /// What a message adds to a run's size, as ``add(_:_:)`` counts it.
        private static func size(of message: Message) -> Int {
            switch message {
            case .action(let action): MessageRuns.size(of: action)
            case .ack(let ack): 8 * ack.results.count
            case .completed(let completed): 8 + 8 * completed.outcomes.count
            default: 0
            }
        }

        /// The sequence the open run's next message must have; nil when it has none, or would pass the largest u64
        /// (which a receiver refuses).
        private var nextSequence: UInt64? {
            let first: UInt64
            switch open {
            case .none: return nil
            case .single(.action(let action)): first = action.sequence
            case .single(.ack(let ack)): first = ack.sequence
            case .single(.completed(let completed)): first = completed.sequence
            case .single: return nil
            case .actions(let run): first = run.firstSequence
            case .acks(let run): first = run.firstSequence
            case .completions(let run): first = run.firstSequence
            }
            let (next, overflow) = first.addingReportingOverflow(UInt64(items))
            return overflow ? nil : next
        }

        private mutating func start(_ message: Message, bytes: Int) {
            close()
            open = .single(message)
            items = 1
            self.bytes = bytes
        }

        private mutating func grow(by more: Int) {
            items += 1
            bytes += more
        }

        private mutating func add(_ action: Message.Action, _ message: Message) {
            let size = MessageRuns.size(of: action)
            guard fits(size), nextSequence == action.sequence else { return start(message, bytes: size) }
            switch open {
            case .single(.action(let first)) where Self.alike(first, action):
                open = .actions(Message.Actions(
                    epoch: first.epoch, firstSequence: first.sequence, actionType: first.actionType, plan: first.plan,
                    traceparent: first.traceparent, entries: []))
                entries.reserveCapacity(16)
                entries.append(ActionEntry(payload: first.payload, error: first.error))
            case .actions(let run)
            where run.epoch == action.epoch && run.actionType.hasSameBytes(as: action.actionType)
                && run.traceparent.hasSameBytes(as: action.traceparent) && run.plan == action.plan:
                break
            default:
                return start(message, bytes: size)
            }
            entries.append(ActionEntry(payload: action.payload, error: action.error))
            grow(by: size)
        }

        private mutating func add(_ ack: Message.Ack, _ message: Message) {
            let size = 8 * ack.results.count
            guard fits(size), nextSequence == ack.sequence else { return start(message, bytes: size) }
            switch open {
            case .single(.ack(let first)) where first.timings.isEmpty && first.epoch == ack.epoch && Self.alike(first.results, ack.results):
                open = .acks(Message.Acks(
                    epoch: first.epoch, firstSequence: first.sequence, count: 0, results: first.results.map(\.withoutDigest),
                    digests: []))
                digests.reserveCapacity(128)
                for result in first.results { digests.appendDigest(result.digest) }
            case .acks(let run) where run.epoch == ack.epoch && Self.alike(run.results, ack.results):
                break
            default:
                return start(message, bytes: size)
            }
            for result in ack.results { digests.appendDigest(result.digest) }
            grow(by: size)
        }

        private mutating func add(_ completed: Message.Completed, _ message: Message) {
            let size = 8 + 8 * completed.outcomes.count
            guard fits(size), nextSequence == completed.sequence else { return start(message, bytes: size) }
            switch open {
            case .single(.completed(let first))
            where first.epoch == completed.epoch && first.actionType.hasSameBytes(as: completed.actionType)
                && Self.alike(first.outcomes, completed.outcomes):
                open = .completions(Message.Completions(
                    epoch: first.epoch, firstSequence: first.sequence, count: 0, actionType: first.actionType,
                    outcomes: first.outcomes.map(\.withoutDigest), elapsedMicros: [], digests: []))
                times.reserveCapacity(128)
                digests.reserveCapacity(128)
                times.appendDigest(first.elapsedMicros)
                for outcome in first.outcomes { digests.appendDigest(outcome.digest) }
            case .completions(let run)
            where run.epoch == completed.epoch && run.actionType.hasSameBytes(as: completed.actionType)
                && Self.alike(run.outcomes, completed.outcomes):
                break
            default:
                return start(message, bytes: size)
            }
            times.appendDigest(completed.elapsedMicros)
            for outcome in completed.outcomes { digests.appendDigest(outcome.digest) }
            grow(by: size)
        }

        /// Alike: a run repeats the first one's bytes for every message, so its text compares byte for byte (`==`
        /// on `String` takes canonically equivalent spellings, such as a precomposed and a combining "é", for one).
        /// Store and worker names are ASCII (BusName).
        private static func alike(_ first: Message.Action, _ other: Message.Action) -> Bool {
            first.epoch == other.epoch && first.actionType.hasSameBytes(as: other.actionType)
                && first.traceparent.hasSameBytes(as: other.traceparent) && first.plan == other.plan
        }

        /// The same results but for their digests.
        private static func alike(_ first: [StoreResult], _ other: [StoreResult]) -> Bool {
            guard first.count == other.count else { return false }
            // Field by field through the subscripts: a copy of each element would retain and release its strings.
            for index in first.indices {
                guard first[index].store == other[index].store, first[index].status == other[index].status,
                    first[index].message.hasSameBytes(as: other[index].message), first[index].output == other[index].output,
                    first[index].readDigest == other[index].readDigest
                else { return false }
            }
            return true
        }

        /// The same outcomes but for their digests.
        private static func alike(_ first: [Outcome], _ other: [Outcome]) -> Bool {
            guard first.count == other.count else { return false }
            for index in first.indices {
                guard first[index].store == other[index].store, first[index].worker == other[index].worker,
                    first[index].status == other[index].status, first[index].message.hasSameBytes(as: other[index].message)
                else { return false }
            }
            return true
        }
    }
}

extension StoreResult {
    fileprivate var withoutDigest: StoreResult {
        var result = self
        result.digest = 0
        return result
    }
}

extension Outcome {
    fileprivate var withoutDigest: Outcome {
        var outcome = self
        outcome.digest = 0
        return outcome
    }
}

extension [UInt8] {
    /// Appends `value` as 8 bytes, big-endian: a run's digests and times.
    fileprivate mutating func appendDigest(_ value: UInt64) {
        Swift.withUnsafeBytes(of: value.bigEndian) { append(contentsOf: $0) }
    }

    /// The `index`-th value of 8 bytes, big-endian; the caller checked the length.
    func digest(at index: Int) -> UInt64 {
        withUnsafeBytes { UInt64(bigEndian: $0.loadUnaligned(fromByteOffset: index * 8, as: UInt64.self)) }
    }
}

extension String {
    /// Whether the two are the same UTF-8 bytes: what the wire carries. `==` answers true for canonically equivalent
    /// spellings too, which are different bytes. Compared in place, a word at a time: a run asks it of every message.
    package func hasSameBytes(as other: String) -> Bool {
        // The same representation, word for word, is the same bytes: a small string holds its bytes in it, a large
        // one points at the storage they are in. Most strings a run compares are of that kind (a batch's action type,
        // its empty messages), and they skip the byte comparison.
        let sameRepresentation = withUnsafeBytes(of: self) { mine in withUnsafeBytes(of: other) { sameBytes(mine, $0) } }
        if sameRepresentation { return true }
        guard utf8.count == other.utf8.count else { return false }
        var (mine, theirs) = (self, other)
        return mine.withUTF8 { first in
            theirs.withUTF8 { second in sameBytes(UnsafeRawBufferPointer(first), UnsafeRawBufferPointer(second)) }
        }
    }
}
