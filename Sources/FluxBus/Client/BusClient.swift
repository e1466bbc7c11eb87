import Flux
import Foundation
import FluxBusProtocol
import ZeroMQ

/// Talks to a coordinator: dispatches actions and reads status, the graph and stores' states.
///
/// Requests are matched to answers by request id, so several may be outstanding at once from many tasks.
///
/// ```swift
/// let client = try BusClient(endpoint: "tcp://127.0.0.1:7401")
/// let result = try await client.dispatch("counter.add", json: #"{"by":1}"#)
/// print(result.sequence, result.succeeded)
/// await client.close()
/// ```
public final class BusClient: Sendable {
    /// The coordinator's control endpoint.
    public let endpoint: String
    /// How long a request waits for its answer by default.
    public let timeout: Duration
    private let loop: IOLoop
    private let core: IOLoopBound<ClientCore>
    private let ownedContext: ZMQContext?
    private let security: PeerSecurity?

    /// Connects to a coordinator. Connecting does not wait for it: a request to a coordinator that is not there
    /// fails after its timeout with ``BusError`` `unreachable`.
    /// - Parameters:
    ///   - endpoint: the control endpoint; by default `FLUXBUS_COORDINATOR` or `tcp://127.0.0.1:7401`.
    ///   - context: a ZeroMQ context to share, as `inproc://` endpoints need.
    ///   - timeout: how long requests wait for an answer by default.
    ///   - security: CURVE with the coordinator; nil for plain text.
    public init(
        endpoint: String? = nil, context: ZMQContext? = nil, timeout: Duration = .seconds(10), security: PeerSecurity? = nil
    ) async throws {
        let endpoint = endpoint ?? ProcessInfo.processInfo.environment[BusDefaults.coordinatorEnvironmentVariable] ?? BusDefaults.controlEndpoint
        self.endpoint = endpoint
        self.timeout = timeout
        self.security = security
        ownedContext = context == nil ? try ZMQContext() : nil
        loop = try IOLoop(context: context ?? ownedContext!, name: "fluxbus-client")
        do {
            core = try await loop.run { scope in
                let dealer = try scope.socket(.dealer)
                try security?.apply(to: dealer)
                let core = ClientCore(dealer: dealer, scope: scope, endpoint: endpoint)
                try HandshakeWatch.watch(dealer, in: scope, endpoint: endpoint) { core.refuseAll($0) }
                try dealer.connect(endpoint)
                scope.add(dealer) { _ in try core.drain() }
                return IOLoopBound(core, scope: scope)
            }
        } catch {
            await loop.shutdown()
            ownedContext?.shutdown()
            throw BusError(code: .usage, message: "cannot connect to \(endpoint): \(error)")
        }
    }

    /// Dispatches an action given as a type and JSON payload.
    /// - Parameters:
    ///   - requestID: makes the request idempotent: a retry with the same id returns the original result instead
    ///     of dispatching again. By default, a fresh UUID.
    /// - Throws: ``BusError``: `usage` when the request is over the protocol's limits (a request id over 4,096
    ///   bytes, a payload over 8 MiB), checked before sending, or when `requestID` is already waiting on this client;
    ///   `refused` (busy, shutting down, invalid); or
    ///   `unreachable` when no answer comes in time, or the coordinator stopped with the outcome unknown.
    @discardableResult
    public func dispatch(
        _ actionType: String, json: String = "{}", error: String? = nil, requestID: String = UUID().uuidString,
        timeout: Duration? = nil
    ) async throws -> DispatchResult {
        try await dispatch(actionType, payload: Array(json.utf8), error: error, requestID: requestID, timeout: timeout)
    }

    /// Dispatches an action with a raw payload.
    @discardableResult
    public func dispatch(
        _ actionType: String, payload: [UInt8], error: String? = nil, requestID: String = UUID().uuidString,
        timeout: Duration? = nil
    ) async throws -> DispatchResult {
        let message = Message.dispatch(.init(requestID: requestID, actionType: actionType, payload: payload, error: error))
        guard case .result(let result) = try await request(message, id: requestID, timeout: timeout) else {
            throw BusError(code: .protocolViolation, message: "the coordinator answered a DISPATCH with something else")
        }
        return DispatchResult(result)
    }

    /// Dispatches many actions as one request: they run in order, each with its own sequence, exactly as if
    /// dispatched one by one, but the coordinator publishes them together and answers once, when all completed.
    /// - Parameters:
    ///   - actions: 1 to the coordinator's `--max-batch` (4,096 by default) actions.
    ///   - requestID: makes the batch idempotent, as for ``dispatch(_:json:error:requestID:timeout:)``.
    /// - Returns: the batch's sequences, every outcome that was not ok, and each replica's digest at the end.
    @discardableResult
    public func dispatchBatch(
        _ actions: [BatchAction], requestID: String = UUID().uuidString, timeout: Duration? = nil
    ) async throws -> Message.BatchResult {
        let message = Message.dispatchBatch(.init(requestID: requestID, actions: actions))
        guard case .batchResult(let result) = try await request(message, id: requestID, timeout: timeout) else {
            throw BusError(code: .protocolViolation, message: "the coordinator answered a DISPATCH_BATCH with something else")
        }
        return result
    }

    /// Dispatches a typed action, its payload encoded as JSON.
    @discardableResult
    public func dispatch<Payload>(
        _ action: Action<Payload>, requestID: String = UUID().uuidString, timeout: Duration? = nil
    ) async throws -> DispatchResult {
        try await dispatch(
            action.name, payload: try AnyAction(action).encodedPayload(), error: action.error?.message,
            requestID: requestID, timeout: timeout)
    }

    /// The bus's workers, stores, queue and sequence.
    public func status(timeout: Duration? = nil) async throws -> Message.Status {
        let id = UUID().uuidString
        guard case .status(let status) = try await request(.statusRequest(.init(requestID: id)), id: id, timeout: timeout) else {
            throw BusError(code: .protocolViolation, message: "the coordinator answered STATUS_REQUEST with something else")
        }
        return status
    }

    /// The declared waitFor graph.
    public func graph(timeout: Duration? = nil) async throws -> Message.Graph {
        let id = UUID().uuidString
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
        let id = UUID().uuidString
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
    /// (ask again from after the last entry for more). Empty when nothing in the range has completed.
    /// - Throws: ``BusError``: `refused` when `from` is older than the retained history.
    public func history(from: UInt64, to: UInt64 = .max, timeout: Duration? = nil) async throws -> [ReplayEntry] {
        // REPLAY carries no request id: one history request at a time is matched by this fixed key.
        guard case .replay(let replay) = try await request(.fetch(.init(epoch: 0, from: from, to: to)), id: ClientCore.historyKey, timeout: timeout)
        else {
            throw BusError(code: .protocolViolation, message: "the coordinator answered FETCH with something else")
        }
        return replay.entries
    }

    /// Every dispatch the coordinator completes from now on, as it publishes them. Ends when the stream is dropped
    /// or the client closed.
    /// - Parameter publishEndpoint: where to subscribe; by default the one `status` reports.
    public func completions(publishEndpoint: String? = nil) async throws -> AsyncThrowingStream<Message.Completed, any Error> {
        var endpoint = publishEndpoint
        if endpoint == nil { endpoint = try await status().publishEndpoint }
        let publisher = endpoint!
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: Message.Completed.self, bufferingPolicy: .bufferingNewest(100_000))
        let subscription = try await loop.run { [security] scope in
            let socket = try scope.socket(.sub)
            try security?.apply(to: socket)
            try socket.subscribe(Codec.signature)
            try socket.connect(publisher)
            let codec = Codec()
            scope.add(socket) { socket in
                while let frames = try socket.tryReceive() {
                    // A burst of completions comes as a BUNDLE.
                    for message in (try? codec.decodeAll(frames)) ?? [] {
                        if case .completed(let completed) = message { continuation.yield(completed) }
                    }
                }
            }
            return IOLoopBound(socket, scope: scope)
        }
        continuation.onTermination = { [loop] _ in
            loop.execute { scope in
                scope.remove(subscription.value)
                subscription.value.close()
            }
        }
        return stream
    }

    /// The state of one live replica of a store, decoded into the store's own state type.
    /// - Parameters:
    ///   - type: the store type, whose `State` the JSON decodes into.
    ///   - name: the store's name on the bus, when it is hosted under another name than `type.name`.
    /// - Throws: ``BusError`` as ``state(of:timeout:)-(String,_)`` does, or a `DecodingError` when the replica's
    ///   state does not fit `S.State`.
    public func state<S: Store>(of type: S.Type, named name: String? = nil, timeout: Duration? = nil) async throws -> S.State {
        let state = try await state(of: name ?? S.name, timeout: timeout)
        return try JSONDecoder().decode(S.State.self, from: Data(state.state))
    }

    /// Closes the connection. Requests still waiting fail.
    public func close() async {
        await loop.shutdown()
        ownedContext?.shutdown()
    }

    private func request(_ message: Message, id: String, timeout: Duration?) async throws -> Message {
        // Over the protocol's limits, the coordinator could not answer: say so now instead of timing out.
        try RequestLimits.check(message)
        let timeout = timeout ?? self.timeout
        let core = self.core
        return try await withCheckedThrowingContinuation { continuation in
            let accepted = loop.execute { _ in core.value.send(message, id: id, timeout: timeout, continuation: continuation) }
            if !accepted {
                continuation.resume(throwing: BusError(code: .unreachable, message: "the client is closed"))
            }
        }
    }
}

/// The client's socket side, on its I/O thread: sends requests and matches answers to them by request id.
final class ClientCore {
    private struct Pending {
        let continuation: CheckedContinuation<Message, any Error>
        let timer: IOLoopTimer
    }

    private let dealer: ZMQSocket
    private let scope: IOLoopScope
    private let endpoint: String
    private let codec = Codec()
    private var pending: [String: Pending] = [:]
    /// Why the coordinator refused this client's handshake, once it has.
    private var refusal: String?
    /// The key under which the one outstanding history request (FETCH, answered by REPLAY) waits.
    static let historyKey = "fetch"

    init(dealer: ZMQSocket, scope: IOLoopScope, endpoint: String) {
        self.dealer = dealer
        self.scope = scope
        self.endpoint = endpoint
    }

    deinit {
        for (_, request) in pending {
            request.continuation.resume(throwing: BusError(code: .unreachable, message: "the client closed before an answer came"))
        }
    }

    func send(_ message: Message, id: String, timeout: Duration, continuation: CheckedContinuation<Message, any Error>) {
        if let refusal {
            return continuation.resume(throwing: BusError(code: .refused, message: refusal))
        }
        // One answer comes per connection and request id: a second wait under the same id would never end.
        guard pending[id] == nil else {
            return continuation.resume(throwing: BusError(code: .usage, message:
                "request id `\(id)` is already waiting for an answer on this client; await that request (its answer is "
                + "this one's too), or use another id"))
        }
        let timer = scope.schedule(after: timeout) { [unowned self] in
            guard let request = pending.removeValue(forKey: id) else { return }
            request.continuation.resume(throwing: BusError(
                code: .unreachable,
                message: "no answer from the coordinator at \(endpoint) within \(timeout); is it running "
                    + "(`fluxbus coordinator`), and is this the right endpoint (--coordinator or FLUXBUS_COORDINATOR)?"))
        }
        pending[id] = Pending(continuation: continuation, timer: timer)
        do {
            _ = try dealer.send(codec.encode(message), nonBlocking: true)
        } catch {
            timer.cancel()
            pending[id] = nil
            continuation.resume(throwing: BusError(code: .unreachable, message: "cannot send to \(endpoint): \(error)"))
        }
    }

    /// The handshake failed: every request waiting, and every later one, fails with the reason.
    func refuseAll(_ reason: String) {
        refusal = reason
        for (_, request) in pending {
            request.timer.cancel()
            request.continuation.resume(throwing: BusError(code: .refused, message: reason))
        }
        pending.removeAll()
    }

    func drain() throws {
        while let frames = try dealer.tryReceive() {
            // Answers to requests sent together may come together, as a BUNDLE.
            for message in (try? codec.decodeAll(frames)) ?? [] { answer(message) }
        }
    }

    private func answer(_ message: Message) {
        guard let id = Self.requestID(of: message), let request = pending.removeValue(forKey: id) else { return }
        request.timer.cancel()
        if case .error(let error) = message {
            // A timeout or a coordinator that stopped (code 7) leaves the outcome unknown, like no answer: exit 3.
            let code: BusError.Code = error.code == .timeout || error.code == .internal ? .unreachable : .refused
            request.continuation.resume(throwing: BusError(code: code, message: error.message, remoteCode: error.code))
        } else if case .reject(let reject) = message {
            request.continuation.resume(throwing: BusError(code: .refused, message: reject.reason))
        } else {
            request.continuation.resume(returning: message)
        }
    }

    private static func requestID(of message: Message) -> String? {
        switch message {
        case .result(let result): result.requestID
        case .batchResult(let result): result.requestID
        // An ERROR answering a FETCH has no request id to carry.
        case .error(let error): error.requestID.isEmpty ? historyKey : error.requestID
        case .status(let status): status.requestID
        case .graph(let graph): graph.requestID
        case .state(let state): state.requestID
        case .chunk(let chunk): chunk.transfer
        case .replay: historyKey
        default: nil
        }
    }
}

extension BatchAction {
    /// One action of a batch, from a typed action: its payload encoded as JSON, as ``BusClient/dispatch(_:requestID:timeout:)``
    /// would send it.
    public init<Payload>(_ action: Action<Payload>) throws {
        let any = AnyAction(action)
        self.init(actionType: any.name, payload: try any.encodedPayload(), error: any.error?.message)
    }
}
