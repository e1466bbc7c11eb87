import Flux
import FluxBusProtocol
import Logging

/// Moving states larger than one message (docs/PROTOCOL.md, "Transfers"). Sending a STATE: the state is copied here,
/// at the exact sequence, encoded off the I/O thread (the ``WorkerEffect/encodeState(requestID:_:)`` effect), and
/// comes back as ``WorkerInput/stateEncoded(requestID:_:)``; its first chunk goes in the STATE, and the coordinator
/// PULLs the rest. Receiving a SNAPSHOT: its chunks are PULLed and reassembled, and it is installed once whole.
extension WorkerEngine {

    // MARK: - Sending a STATE

    func answer(_ request: Message.StateRequest) {
        guard let store = storesByName[request.store] else {
            logger.warning("state requested for a store this worker does not host", metadata: ["store": "\(request.store)"])
            return send(.error(.init(
                requestID: request.requestID, code: .unknownStore,
                message: "worker `\(id)` does not host store `\(request.store)`")))
        }
        // A store that ran the dispatch in hand under an earlier epoch holds an entry the restarted coordinator has
        // not confirmed: its log may have lost it (a power cut while it synced) and logged another there. Until that
        // epoch's entry at the sequence shows it is the same, the state is not the bus's to serve.
        if let current, current.epoch < epoch, current.results.contains(where: { $0.store == store.name }) {
            logger.notice("refused a state request: the store ran an entry the restarted coordinator has not confirmed", metadata: [
                "store": "\(store.name)", "seq": "\(current.sequence)",
            ])
            return send(.error(.init(requestID: request.requestID, code: .busy, message:
                "worker `\(id)` ran #\(current.sequence) in `\(store.name)` before the coordinator restarted, and the "
                + "restarted coordinator has not yet confirmed that its log holds the same entry there; ask again shortly")))
        }
        // The state includes the dispatch in hand if the store already ran in it; the coordinator keeps a snapshot
        // only if its sequence has completed. Copy and digest now, at that sequence; encode elsewhere.
        outbound.beginEncoding(request.requestID, .init(
            store: store.name, sequence: appliedSequence(of: store.name), digest: digest(of: store)))
        pendingEncode(request.requestID, store.takeStateCopy())
    }

    func stateEncoded(_ requestID: String, _ result: Result<EncodedState, BusError>) {
        guard phase != .stopped, let announced = outbound.finishEncoding(requestID) else { return }
        let encoded: EncodedState
        switch result {
        case .success(let value): encoded = value
        case .failure(let error):
            logger.error("cannot encode a store's state", metadata: ["store": "\(announced.store)", "error": "\(error.message)"])
            return send(.error(.init(requestID: requestID, code: .internal, message:
                "worker `\(id)` cannot encode the state of store `\(announced.store)`: \(error.message)")))
        }
        let first = Array(encoded.bytes.prefix(transferChunkBytes))
        if first.count < encoded.bytes.count {
            for dropped in outbound.hold(requestID, encoded.bytes, at: now) {
                logger.notice("dropped a state transfer to make room", metadata: ["transfer": "\(dropped)"])
            }
        }
        send(.state(.init(
            requestID: requestID, store: announced.store, worker: id, sequence: announced.sequence, digest: announced.digest,
            size: UInt64(encoded.bytes.count), checksum: encoded.checksum, state: first)))
    }

    /// Answers a PULL for a STATE this worker is sending.
    func serve(_ pull: Message.Pull) {
        guard pull.maxBytes > 0, Int(pull.maxBytes) <= codec.limits.maxBytesField else {
            malformedCount += 1
            return send(.error(.init(requestID: pull.transfer, code: .invalidRequest, message:
                "a PULL must ask for 1 to \(codec.limits.maxBytesField) bytes, not \(pull.maxBytes)")))
        }
        guard let bytes = outbound.serve(pull, at: now) else {
            return send(.error(.init(requestID: pull.transfer, code: .transferGone, message:
                "worker `\(id)` no longer holds transfer `\(pull.transfer)` (finished, expired or dropped); ask again")))
        }
        send(.chunk(.init(transfer: pull.transfer, offset: pull.offset, bytes: Array(bytes))))
    }

    // MARK: - Receiving a SNAPSHOT

    /// A SNAPSHOT's header arrived: install it if whole, else start PULLing the rest.
    func receive(_ snapshot: Message.Snapshot) {
        // Only in answer to our HELLO: joining (before WELCOME) or catching up.
        guard session.hasSaidHello, phase == .joining || phase == .catchingUp else {
            return drop(snapshot, because: "this worker is not joining or catching up")
        }
        guard storesByName.hosts(snapshot.store) else {
            return drop(snapshot, because: "this worker does not host the store")
        }
        guard UInt64(snapshot.state.count) < snapshot.size else {
            guard UInt64(snapshot.state.count) == snapshot.size,
                TransferWindow.fnv1a64(snapshot.state, continuing: StateDigest.offsetBasis) == snapshot.checksum
            else { return drop(snapshot, because: "its bytes do not match its size and checksum") }
            return snapshotArrived(snapshot)
        }
        guard !snapshot.transfer.isEmpty else { return drop(snapshot, because: "it is incomplete and names no transfer") }
        for pull in downloads.start(snapshot, chunkSize: transferChunkBytes, at: now) { send(.pull(pull)) }
    }

    func receive(_ chunk: Message.Chunk) {
        guard phase == .joining || phase == .catchingUp else { return }
        switch downloads.accept(chunk, at: now) {
        case .more(let pulls):
            for pull in pulls { send(.pull(pull)) }
        case .complete(let snapshot):
            snapshotArrived(snapshot)
        case .failed(let store, let reason):
            malformedCount += 1
            logger.warning("abandoned a SNAPSHOT; joining again", metadata: ["store": "\(store)", "reason": "\(reason)"])
            sayHello()
        case .unknown:
            // A late chunk of a download already abandoned.
            logger.debug("ignored a CHUNK of no open download", metadata: ["transfer": "\(chunk.transfer)"])
        }
    }

    /// The coordinator no longer holds a snapshot this worker was PULLing (compaction replaced it): join again.
    func snapshotGone(_ error: Message.Error) {
        let store = downloads.abandon(error.requestID) ?? "?"
        logger.notice("a snapshot went away mid-transfer; joining again", metadata: ["store": "\(store)", "reason": "\(error.message)"])
        sayHello()
    }

    /// On every tick: drop expired STATE transfers, and join again if a SNAPSHOT stopped arriving.
    func checkTransfers() {
        for expired in outbound.expire(at: now) {
            logger.notice("dropped an idle state transfer", metadata: ["transfer": "\(expired)"])
        }
        if downloads.isStalled(at: now) {
            logger.warning("a SNAPSHOT stopped arriving; joining again")
            sayHello()
        }
    }
}
