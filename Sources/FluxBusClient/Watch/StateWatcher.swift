import Flux
import FluxBusProtocol

/// The work behind a ``StateWatch``'s iterator: one replica of the store here, brought forward entry by entry from the
/// coordinator's history, woken by what the coordinator publishes.
///
/// The published stream only says that there is something to read: what is applied always comes from the history,
/// from the replica's sequence + 1 on, so a publication dropped (a full buffer, a slow joiner) never leaves a gap.
final class StateWatcher<S: Store> {
    private let client: BusClient
    private let name: String
    private let buffer: Int
    private var replica: StoreReplica
    private var started = false
    private var publications: AsyncThrowingStream<Message, any Error>.AsyncIterator?
    /// Entries fetched and not yet applied, oldest first.
    private var pending: ArraySlice<ReplayEntry> = []
    /// The newest sequence the coordinator said it published or completed.
    private var heardThrough: UInt64 = 0
    /// Sequence → the digests the replicas that ran the store ok reported, to check the state here against.
    private var digests: [UInt64: [(worker: String, digest: UInt64)]] = [:]
    /// Sequences the history marks poisoned for the store: every replica skips them, and so does this one.
    private var poisoned: Set<UInt64> = []

    init(client: BusClient, name: String, buffer: Int) {
        self.client = client
        self.name = name
        self.buffer = buffer
        replica = StoreReplica(AnyStore(S.self, name: name))
    }

    /// After an error, or the end of the published stream: an iterator that threw has nothing more to say.
    private var finished = false

    func next() async throws -> StateChange<S.State>? {
        guard !finished else { return nil }
        do {
            guard let change = try await advance() else {
                finished = true
                return nil
            }
            return change
        } catch {
            // The replica may be half-way through an entry, or never seeded: nothing it holds may be shown.
            finished = true
            throw error
        }
    }

    private func advance() async throws -> StateChange<S.State>? {
        if !started {
            started = true
            // The bus may host the store with other dependencies than its type declares (`--store NAME=KIND,after=…`):
            // its handlers read their outputs under the names the workers' do.
            if let node = try await client.graph().stores.first(where: { $0.name == name }), node.dependsOn != S.dependencies {
                replica = StoreReplica(AnyStore(S.self, name: name, dependencies: node.dependsOn))
            }
            // Subscribed before the state is read, so that nothing completed after it goes unannounced.
            publications = try await client.publications(buffer: buffer).makeAsyncIterator()
            try await seed()
            // What completed between the state and the subscription: the history has it, whether announced or not.
            heardThrough = .max
            return element(.initial, actionType: nil)
        }
        while true {
            try Task.checkCancellation()
            while let entry = pending.popFirst() {
                let run = poisoned.remove(entry.sequence) != nil ? replica.skipPoisoned(entry) : replica.apply(entry)
                try check(run, against: entry)
                if run == .ok {
                    try verifyDigest(at: entry.sequence)
                    return element(.changed, actionType: entry.actionType)
                }
                digests[entry.sequence] = nil
            }
            if heardThrough > replica.sequence {
                if let resynchronized = try await fetch() { return resynchronized }
                continue
            }
            guard let message = try await publications?.next() else { return nil }
            hear(message)
        }
    }

    private func seed() async throws {
        let state = try await client.state(of: name)
        do {
            try replica.seed(json: state.state, at: state.sequence)
        } catch {
            throw BusError(code: .usage, message:
                "the state of `\(name)` (from \(state.worker) at #\(state.sequence)) does not decode as \(S.self).State: \(error)")
        }
        let digest = replica.digest()
        guard digest == state.digest else {
            throw BusError(code: .diverged, message:
                "the state of `\(name)` from \(state.worker) at #\(state.sequence) has digest \(StateDigest.hex(state.digest)), but decoded "
                + "as \(S.self).State and encoded again it has \(StateDigest.hex(digest)): the type here is not the one the workers run")
        }
    }

    /// Takes note of a publication: a dispatch that did not plan the store needs no history when it is the next one.
    private func hear(_ message: Message) {
        switch message {
        case .completed(let completed):
            heardThrough = max(heardThrough, completed.sequence)
            guard completed.sequence > replica.sequence else { return }
            let ran = completed.outcomes.filter { $0.store == name }
            if ran.isEmpty, completed.sequence == replica.sequence + 1, pending.isEmpty {
                replica.pass(completed.sequence)
                return
            }
            let ok = ran.filter { $0.status == .ok && !$0.worker.isEmpty }.map { (worker: $0.worker, digest: $0.digest) }
            if !ok.isEmpty { digests[completed.sequence] = ok }
        case .heartbeat(let heartbeat):
            heardThrough = max(heardThrough, heartbeat.sequence)
        default:
            break
        }
    }

    /// Fetches what follows the replica's sequence; when the log no longer holds it, seeds the replica again and
    /// returns the element that says so.
    private func fetch() async throws -> StateChange<S.State>? {
        let from = replica.sequence + 1
        let entries: [ReplayEntry]
        do {
            let page = try await client.historyPage(from: from)
            entries = page.entries
            poisoned.formUnion(page.poisoned.filter { $0.store == name }.map(\.sequence))
        } catch let error as BusError where error.code == .refused {
            // Compacted past the replica: only a fresh state can bring it forward.
            let before = replica.sequence
            try await seed()
            guard replica.sequence >= before else {
                throw BusError(code: .refused, message:
                    "watching `\(name)`: the history no longer holds #\(from) (\(error.message)), and the live replica "
                    + "asked for a fresh state is behind this watcher (#\(replica.sequence)); watch again later")
            }
            pending = []
            poisoned = poisoned.filter { $0 > replica.sequence }
            digests = digests.filter { $0.key > replica.sequence }
            heardThrough = replica.sequence
            return element(.resynchronized, actionType: nil)
        }
        guard let first = entries.first else {
            // Nothing completed past the replica yet (a HEARTBEAT names what was published): wait for the next word.
            heardThrough = replica.sequence
            return nil
        }
        for (offset, entry) in entries.enumerated() where entry.sequence != first.sequence + UInt64(offset) || first.sequence != from {
            throw BusError(code: .protocolViolation, message:
                "the history asked from #\(from) answered #\(first.sequence)…, with #\(entry.sequence) at position \(offset): "
                + "not the consecutive dispatches it promises")
        }
        pending = entries[...]
        return nil
    }

    /// A run here must end as the bus recorded it for the store; otherwise the state here is not the replicas'.
    private func check(_ run: StoreReplica.Run, against entry: ReplayEntry) throws {
        guard let recorded = entry.outputs.first(where: { $0.store == name }) else { return }
        let agrees = switch (run, recorded.status) {
        case (.ok, .ok), (.failed, .failed), (.skipped, .skipped), (_, .unknown), (.poisoned, _): true
        default: false
        }
        guard !agrees else { return }
        throw BusError(code: .diverged, message:
            "watching `\(name)`: at #\(entry.sequence) (\(entry.actionType)) the store here ended \(run), but the bus "
            + "recorded \(recorded.status)\(recorded.message.isEmpty ? "" : " (\(recorded.message))"); the \(S.self) here "
            + "does not behave as the workers' does (another version?), so its state would be wrong")
    }

    private func verifyDigest(at sequence: UInt64) throws {
        guard let replicas = digests.removeValue(forKey: sequence) else { return }
        let digest = replica.digest()
        for other in replicas where other.digest != digest {
            throw BusError(code: .diverged, message:
                "watching `\(name)`: at #\(sequence) the state here has digest \(StateDigest.hex(digest)), but \(other.worker) reported "
                + "\(StateDigest.hex(other.digest)); the \(S.self) here does not behave as the workers' does (another version?)")
        }
    }

    private func element(_ kind: StateChange<S.State>.Kind, actionType: String?) -> StateChange<S.State> {
        let state = (replica.store.instance as! S).state
        return StateChange(kind: kind, sequence: replica.sequence, actionType: actionType, state: state)
    }
}
