import Flux
import Foundation
import FluxBusProtocol

extension BusClient {
    /// The bus's workers, stores, queue and sequence.
    public func status(timeout: Duration? = nil) async throws -> Message.Status {
        let id = RequestIDs.next()
        guard case .status(let status) = try await request(.statusRequest(.init(requestID: id)), id: id, timeout: timeout) else {
            throw BusError(code: .protocolViolation, message: "the coordinator answered STATUS_REQUEST with something else")
        }
        return status
    }

    /// The declared waitFor graph.
    public func graph(timeout: Duration? = nil) async throws -> Message.Graph {
        let id = RequestIDs.next()
        guard case .graph(let graph) = try await request(.graphRequest(.init(requestID: id)), id: id, timeout: timeout) else {
            throw BusError(code: .protocolViolation, message: "the coordinator answered GRAPH_REQUEST with something else")
        }
        return graph
    }

    /// The state of one live replica of a store, as JSON, with the sequence it reflects and its digest.
    ///
    /// A state larger than one message arrives in chunks, PULLed one at a time (docs/PROTOCOL.md, "Transfers"); the
    /// returned STATE's `first` holds all of it, checked against its size and checksum. `timeout` bounds each message.
    public func state(of store: String, timeout: Duration? = nil) async throws -> Message.State {
        let id = RequestIDs.next()
        guard case .state(var state) = try await request(.stateRequest(.init(requestID: id, store: store)), id: id, timeout: timeout) else {
            throw BusError(code: .protocolViolation, message: "the coordinator answered STATE_REQUEST with something else")
        }
        var window = TransferWindow(transfer: id, size: state.size, checksum: state.checksum, first: state.state, window: 1)
        var bytes = state.state
        while !window.isComplete {
            for pull in window.pulls() {
                guard case .chunk(let chunk) = try await request(.pull(pull), id: id, timeout: timeout) else {
                    throw BusError(code: .protocolViolation, message: "the coordinator answered PULL with something else")
                }
                do {
                    try window.accept(chunk)
                } catch {
                    throw BusError(code: .protocolViolation, message: "the state of `\(store)` arrived out of order: \(error)")
                }
                bytes += chunk.bytes
            }
        }
        guard UInt64(bytes.count) == state.size, window.checksumMatches else {
            throw BusError(code: .protocolViolation, message:
                "the state of `\(store)` arrived damaged (\(bytes.count) of \(state.size) bytes, or a checksum mismatch); ask again")
        }
        state.state = bytes
        return state
    }

    /// Completed dispatches from the coordinator's history, oldest first: at most one REPLAY's worth from `from`
    /// (ask again from after the last entry for more). Empty when nothing in the range has completed. Concurrent
    /// calls on one client take turns.
    /// - Throws: ``BusError``: `refused` when `from` is older than the retained history.
    public func history(from: UInt64, to: UInt64 = .max, timeout: Duration? = nil) async throws -> [ReplayEntry] {
        try await historyPage(from: from, to: to, timeout: timeout).entries
    }

    /// As ``history(from:to:timeout:)``, with the poison marks of those entries: a store an entry's action is marked
    /// poisoned for skipped it on every replica, whatever outcome the entry recorded at completion.
    public func historyPage(
        from: UInt64, to: UInt64 = .max, timeout: Duration? = nil
    ) async throws -> (entries: [ReplayEntry], poisoned: [PoisonMark]) {
        // REPLAY carries no request id: one history request at a time, matched by this fixed key.
        let answer = try await historyGate.withTurn {
            try await request(.fetch(.init(epoch: 0, from: from, to: to)), id: ClientChannel.historyKey, timeout: timeout)
        }
        guard case .replay(let replay) = answer else {
            throw BusError(code: .protocolViolation, message: "the coordinator answered FETCH with something else")
        }
        return (replay.entries, replay.poisoned)
    }

    /// The state of one live replica of a store, decoded into the store's own state type.
    /// - Parameters:
    ///   - type: the store type, whose `State` the JSON decodes into.
    ///   - name: the store's name on the bus, when it is hosted under another name than `type.name`.
    ///   - timeout: how long to wait for each message of the answer; by default the client's ``BusClient/timeout``.
    /// - Throws: ``BusError`` as ``state(of:timeout:)-(String,_)`` does, or a `DecodingError` when the replica's
    ///   state does not fit `S.State`.
    public func state<S: Store>(of type: S.Type, named name: String? = nil, timeout: Duration? = nil) async throws -> S.State {
        let state = try await state(of: name ?? S.name, timeout: timeout)
        return try JSONDecoder().decode(S.State.self, from: Data(state.state))
    }
}
