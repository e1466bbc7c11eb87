/// A FluxBus message: one case per command, each carrying that command's body.
///
/// The bodies are nested here (`Message.Hello`, `Message.Result`, …) so that their names,
/// which follow the protocol's commands, never shadow `Swift.Result` or `Swift.Error`.
/// `docs/PROTOCOL.md` gives every layout byte by byte and says who sends what, on which socket.
///
/// ```swift
/// let codec = Codec()
/// let frames = codec.encode(.heartbeat(.init(epoch: 7, sequence: 42)))
/// if case .heartbeat(let beat) = try codec.decode(frames) {
///     print(beat.sequence)  // 42
/// }
/// ```
public enum Message: Sendable, Hashable {
    /// 0x01, worker → coordinator: join with the stores the worker hosts.
    case hello(Hello)
    /// 0x02, coordinator → worker: accepted; here are the epoch, sequence and publish endpoint.
    case welcome(Welcome)
    /// 0x03, coordinator → worker: refused, with a code and a reason.
    case reject(Reject)
    /// 0x04, worker → coordinator: caught up; count me in.
    case ready(Ready)
    /// 0x05, coordinator → workers (PUB, or ROUTER when re-sent): run this action.
    case action(Action)
    /// 0x06, coordinator → worker: the outcome and output of a remote dependency.
    case release(Release)
    /// 0x07, worker → coordinator: stores' results for one dispatch.
    case ack(Ack)
    /// 0x08, worker or client → coordinator: send me completed dispatches in a range.
    case fetch(Fetch)
    /// 0x09, coordinator → requester: completed dispatches with their recorded outputs.
    case replay(Replay)
    /// 0x0A, both ways: still here, and the sequence I am at.
    case heartbeat(Heartbeat)
    /// 0x0B, either way: leaving (or: you are no longer registered).
    case goodbye(Goodbye)
    /// 0x0C, coordinator → worker: install this store state as of a sequence.
    case snapshot(Snapshot)
    /// 0x10, client or worker → coordinator: please dispatch this action.
    case dispatch(Dispatch)
    /// 0x11, coordinator → requester: the dispatch completed; here are the outcomes.
    case result(Result)
    /// 0x12, coordinator → requester: the request failed.
    case error(Error)
    /// 0x13, client → coordinator: describe the bus.
    case statusRequest(StatusRequest)
    /// 0x14, coordinator → client: the bus's workers and stores.
    case status(Status)
    /// 0x15, client → coordinator: describe the waitFor graph.
    case graphRequest(GraphRequest)
    /// 0x16, coordinator → client: the waitFor graph.
    case graph(Graph)
    /// 0x17, client → coordinator, and coordinator → worker: send one store's state.
    case stateRequest(StateRequest)
    /// 0x18, worker → coordinator, and coordinator → client: one store's state.
    case state(State)
    /// 0x19, coordinator → everyone (PUB): a dispatch completed.
    case completed(Completed)
    /// 0x1A, client or worker → coordinator: dispatch these actions, in order, as one request.
    case dispatchBatch(DispatchBatch)
    /// 0x1B, coordinator → requester: every action of the batch completed.
    case batchResult(BatchResult)
    /// 0x1C, any peer → another, on any socket: several messages in one, to be handled in order.
    case bundle(Bundle)
    /// 0x1D, a transfer's receiver → its sender: send the next bytes of a SNAPSHOT or STATE.
    case pull(Pull)
    /// 0x1E, a transfer's sender → its receiver: the bytes a PULL asked for.
    case chunk(Chunk)
    /// 0x1F, coordinator → workers: the ACTIONs of consecutive sequences alike but for payloads and errors.
    case actions(Actions)
    /// 0x20, worker → coordinator: the ACKs of consecutive sequences alike but for their digests.
    case acks(Acks)
    /// 0x21, coordinator → everyone (PUB): the COMPLETEDs of consecutive sequences alike but for digests and times.
    case completions(Completions)

    /// The command byte of this message.
    public var command: Command {
        switch self {
        case .hello: .hello
        case .welcome: .welcome
        case .reject: .reject
        case .ready: .ready
        case .action: .action
        case .release: .release
        case .ack: .ack
        case .fetch: .fetch
        case .replay: .replay
        case .heartbeat: .heartbeat
        case .goodbye: .goodbye
        case .snapshot: .snapshot
        case .dispatch: .dispatch
        case .result: .result
        case .error: .error
        case .statusRequest: .statusRequest
        case .status: .status
        case .graphRequest: .graphRequest
        case .graph: .graph
        case .stateRequest: .stateRequest
        case .state: .state
        case .completed: .completed
        case .dispatchBatch: .dispatchBatch
        case .batchResult: .batchResult
        case .bundle: .bundle
        case .pull: .pull
        case .chunk: .chunk
        case .actions: .actions
        case .acks: .acks
        case .completions: .completions
        }
    }

    /// Hands the body to `handler`, moved out of the message rather than copied: the single switch that encoding,
    /// sizing and tooling share. Encoding a message used to copy its body twice, once to size it and once to write
    /// it, and each copy retained and released every field.
    package consuming func handBody<H: BodyHandler>(to handler: inout H) throws(H.Failure) {
        switch consume self {
        case .hello(var body): try handler.handle(&body)
        case .welcome(var body): try handler.handle(&body)
        case .reject(var body): try handler.handle(&body)
        case .ready(var body): try handler.handle(&body)
        case .action(var body): try handler.handle(&body)
        case .release(var body): try handler.handle(&body)
        case .ack(var body): try handler.handle(&body)
        case .fetch(var body): try handler.handle(&body)
        case .replay(var body): try handler.handle(&body)
        case .heartbeat(var body): try handler.handle(&body)
        case .goodbye(var body): try handler.handle(&body)
        case .snapshot(var body): try handler.handle(&body)
        case .dispatch(var body): try handler.handle(&body)
        case .result(var body): try handler.handle(&body)
        case .error(var body): try handler.handle(&body)
        case .statusRequest(var body): try handler.handle(&body)
        case .status(var body): try handler.handle(&body)
        case .graphRequest(var body): try handler.handle(&body)
        case .graph(var body): try handler.handle(&body)
        case .stateRequest(var body): try handler.handle(&body)
        case .state(var body): try handler.handle(&body)
        case .completed(var body): try handler.handle(&body)
        case .dispatchBatch(var body): try handler.handle(&body)
        case .batchResult(var body): try handler.handle(&body)
        case .bundle(var body): try handler.handle(&body)
        case .pull(var body): try handler.handle(&body)
        case .chunk(var body): try handler.handle(&body)
        case .actions(var body): try handler.handle(&body)
        case .acks(var body): try handler.handle(&body)
        case .completions(var body): try handler.handle(&body)
        }
    }

    /// Visits the fields of a copy of the body.
    package func visitBody<V: WireVisitor>(_ visitor: inout V) throws(V.Failure) {
        var failure: V.Failure?
        let message = self
        withUnsafeMutablePointer(to: &visitor) { pointer in
            var visiting = Visiting(visitor: pointer)
            do throws(V.Failure) { try message.handBody(to: &visiting) } catch { failure = error }
        }
        if let failure { throw failure }
    }

    /// A message of `command` whose body starts empty and is then visited: with the reader,
    /// this decodes. The single switch from command to body type.
    package static func make<V: WireVisitor>(_ command: Command, by visitor: inout V) throws(V.Failure) -> Message {
        switch command {
        case .hello: .hello(try visitor.fresh())
        case .welcome: .welcome(try visitor.fresh())
        case .reject: .reject(try visitor.fresh())
        case .ready: .ready(try visitor.fresh())
        case .action: .action(try visitor.fresh())
        case .release: .release(try visitor.fresh())
        case .ack: .ack(try visitor.fresh())
        case .fetch: .fetch(try visitor.fresh())
        case .replay: .replay(try visitor.fresh())
        case .heartbeat: .heartbeat(try visitor.fresh())
        case .goodbye: .goodbye(try visitor.fresh())
        case .snapshot: .snapshot(try visitor.fresh())
        case .dispatch: .dispatch(try visitor.fresh())
        case .result: .result(try visitor.fresh())
        case .error: .error(try visitor.fresh())
        case .statusRequest: .statusRequest(try visitor.fresh())
        case .status: .status(try visitor.fresh())
        case .graphRequest: .graphRequest(try visitor.fresh())
        case .graph: .graph(try visitor.fresh())
        case .stateRequest: .stateRequest(try visitor.fresh())
        case .state: .state(try visitor.fresh())
        case .completed: .completed(try visitor.fresh())
        case .dispatchBatch: .dispatchBatch(try visitor.fresh())
        case .batchResult: .batchResult(try visitor.fresh())
        case .bundle: .bundle(try visitor.fresh())
        case .pull: .pull(try visitor.fresh())
        case .chunk: .chunk(try visitor.fresh())
        case .actions: .actions(try visitor.fresh())
        case .acks: .acks(try visitor.fresh())
        case .completions: .completions(try visitor.fresh())
        }
    }
}

extension WireVisitor {
    /// An empty `T`, visited.
    fileprivate mutating func fresh<T: WireItem>() throws(Failure) -> T {
        var value = T()
        try value.visit(&self)
        return value
    }
}

/// What ``Message/handBody(to:)`` hands a body to, whatever its type.
package protocol BodyHandler {
    associatedtype Failure: Error
    mutating func handle<T: WireItem>(_ body: inout T) throws(Failure)
}

/// Hands each body to a visitor that the caller keeps (through a pointer, so that a writer's buffer is not copied).
private struct Visiting<V: WireVisitor>: BodyHandler {
    let visitor: UnsafeMutablePointer<V>

    mutating func handle<T: WireItem>(_ body: inout T) throws(V.Failure) {
        try body.visit(&visitor.pointee)
    }
}
