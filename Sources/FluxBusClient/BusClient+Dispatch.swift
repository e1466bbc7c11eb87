import Flux
import Foundation
import FluxBusProtocol

extension BusClient {
    /// Dispatches an action given as a type and JSON payload.
    /// - Parameters:
    ///   - actionType: the action's name, such as `counter.add`.
    ///   - json: the payload, as JSON text.
    ///   - error: an error the action carries (Flux's `action.error`), or nil.
    ///   - requestID: makes the request idempotent: a retry with the same id returns the original result instead
    ///     of dispatching again. By default, a new one from ``RequestIDs/next()``.
    ///   - timeout: how long to wait for the result; by default the client's ``BusClient/timeout``.
    /// - Throws: ``BusError``: `usage` when the request is over the protocol's limits (a request id over 4,096
    ///   bytes, a payload over 8 MiB), checked before sending, when `requestID` is empty, or when it is already
    ///   waiting on this client;
    ///   `refused` (busy, shutting down, invalid); or
    ///   `unreachable` when no answer comes in time, or the coordinator stopped with the outcome unknown.
    @discardableResult
    public func dispatch(
        _ actionType: String, json: String = "{}", error: String? = nil, requestID: String = RequestIDs.next(),
        timeout: Duration? = nil
    ) async throws -> DispatchResult {
        try await dispatch(actionType, payload: Array(json.utf8), error: error, requestID: requestID, timeout: timeout)
    }

    /// Dispatches an action with a raw payload.
    @discardableResult
    public func dispatch(
        _ actionType: String, payload: [UInt8], error: String? = nil, requestID: String = RequestIDs.next(),
        timeout: Duration? = nil
    ) async throws -> DispatchResult {
        try await send(.init(requestID: requestID, actionType: actionType, payload: payload, error: error), timeout: timeout)
    }

    /// Dispatches an action under a trace: the result's ``DispatchResult/trace`` says where the time went, step by
    /// step, across the coordinator and the workers. Give the `traceparent` of your own span (for example one that
    /// swift-distributed-tracing's W3C propagator injected) so that the bus's steps join your trace, or
    /// `TraceContext.random()` for a new one.
    ///
    /// ```swift
    /// let trace = try TraceContext(parsing: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
    /// let result = try await client.dispatch("country-update", payload: Array(#"{"country":"Japan"}"#.utf8), trace: trace)
    /// for step in result.trace { print(step.startMicros, step.process, step.step) }
    /// ```
    @discardableResult
    public func dispatch(
        _ actionType: String, payload: [UInt8], error: String? = nil, requestID: String = RequestIDs.next(),
        timeout: Duration? = nil, trace: TraceContext
    ) async throws -> DispatchResult {
        try await send(
            .init(requestID: requestID, actionType: actionType, payload: payload, error: error, traceparent: trace.description),
            timeout: timeout)
    }

    private func send(_ dispatch: Message.Dispatch, timeout: Duration?) async throws -> DispatchResult {
        guard case .result(let result) = try await request(.dispatch(dispatch), id: dispatch.requestID, timeout: timeout) else {
            throw BusError(code: .protocolViolation, message: "the coordinator answered a DISPATCH with something else")
        }
        return DispatchResult(result)
    }

    /// Dispatches many actions as one request: they run in order, each with its own sequence, exactly as if
    /// dispatched one by one, but the coordinator publishes them together and answers once, when all completed.
    /// - Parameters:
    ///   - actions: 1 to the coordinator's `--max-batch` (4,096 by default) actions.
    ///   - requestID: makes the batch idempotent, as for ``dispatch(_:json:error:requestID:timeout:)``.
    ///   - timeout: how long to wait for the batch's answer; by default the client's ``BusClient/timeout``.
    /// - Returns: the batch's sequences, every outcome that was not ok, and each replica's digest at the end.
    @discardableResult
    public func dispatchBatch(
        _ actions: [BatchAction], requestID: String = RequestIDs.next(), timeout: Duration? = nil
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
        _ action: Action<Payload>, requestID: String = RequestIDs.next(), timeout: Duration? = nil
    ) async throws -> DispatchResult {
        try await dispatch(
            action.name, payload: try AnyAction(action).encodedPayload(), error: action.error?.message,
            requestID: requestID, timeout: timeout)
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
