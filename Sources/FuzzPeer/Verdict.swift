import FluxBusProtocol

/// Which of the coordinator's hostile-input counters a message from this peer lands in, predicted with the real
/// ``Codec`` and the coordinator's rules for a peer that is not a worker (see `CoordinatorEngine.handle`).
///
/// A message the coordinator would serve (DISPATCH, STATUS_REQUEST, GRAPH_REQUEST, STATE_REQUEST, a PULL, a FETCH it
/// can answer) or ignore without counting (GOODBYE from a stranger) has no verdict: the fuzzer never sends it, so that
/// every message it sends is counted exactly once.
enum Verdict: String, CaseIterable, Sendable {
    /// Fails to decode, or decodes to a message a coordinator never receives from this peer: `malformed`.
    case malformed
    /// A HELLO, refused (its worker id is not this peer's routing id): `refused`.
    case refused
    /// READY, ACK, HEARTBEAT, or a FETCH for another epoch, from a peer that is not a member: `strangers`.
    case strangers

    /// The verdict for `frames` sent by a peer that never joined and whose routing id the ROUTER chose (5 bytes, the
    /// first one zero), or nil when the coordinator would serve it or drop it uncounted.
    /// - Parameters:
    ///   - epoch: the coordinator's epoch when known. A FETCH in that epoch (or epoch 0) is served.
    static func of(_ frames: [[UInt8]], codec: Codec, epoch: UInt64?) -> Verdict? {
        let message: Message
        do { message = try codec.decode(frames) } catch { return .malformed }
        switch message {
        case .bundle, .actions, .acks, .completions:
            // A bundle or a run that does not decode whole is one malformed message. One that does is handled message
            // by message, which this oracle does not model: the peer does not send it.
            return (try? codec.decodeAll(frames)) == nil ? .malformed : nil
        case .hello(let hello):
            // A HELLO whose worker id is this peer's own routing id would be welcomed. The ROUTER's ids start with a
            // zero byte, so such a HELLO is never sent.
            return hello.workerID.utf8.first == 0 ? nil : .refused
        case .ready, .ack, .heartbeat:
            return .strangers
        case .fetch(let fetch):
            // The coordinator reads a FETCH from 0 as from 1, refuses from > to as malformed, and tells a peer asking
            // for another epoch to join first.
            if max(fetch.from, 1) > fetch.to { return .malformed }
            return mayBeCurrent(fetch.epoch, known: epoch) ? nil : .strangers
        case .goodbye, .dispatch, .dispatchBatch, .statusRequest, .graphRequest, .stateRequest:
            return nil
        case .state, .error, .chunk:
            // Only a worker answers a forwarded state request, or sends the chunks of one.
            return .malformed
        case .pull(let pull):
            // A PULL for no open transfer is answered ERROR `transfer gone`, uncounted; one asking for no bytes, or
            // for more than a message carries, is malformed.
            return pull.maxBytes == 0 || Int(pull.maxBytes) > codec.limits.maxBytesField ? .malformed : nil
        case .welcome, .reject, .action, .release, .replay, .snapshot, .result, .status, .graph, .completed, .batchResult:
            return .malformed
        }
    }

    /// Whether `candidate` may be the coordinator's epoch (or 0, "any epoch"). When the epoch is not known, every
    /// value that looks like a millisecond clock reading (the coordinator's epochs are) counts as possible.
    private static func mayBeCurrent(_ candidate: UInt64, known: UInt64?) -> Bool {
        if candidate == 0 { return true }
        if let known { return candidate == known }
        return (1_000_000_000_000...10_000_000_000_000).contains(candidate)
    }
}
