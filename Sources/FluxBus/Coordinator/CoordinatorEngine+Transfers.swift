import FluxBusProtocol
import Logging

/// Moving states larger than one message (docs/PROTOCOL.md, "Transfers"). The coordinator receives a snapshot
/// round's STATEs chunk by chunk into its log, serves a joining worker's PULLs for a SNAPSHOT from its log, and
/// relays a client's PULLs for a STATE to the replica. It never holds a whole state in memory.
extension CoordinatorEngine {

    // MARK: - Receiving a snapshot round's STATE

    /// Keeps a replica's answer to a snapshot request, if it is sound and completed history: into the log chunk by
    /// chunk, recorded as the store's snapshot only once whole and checked.
    func receiveSnapshot(_ state: Message.State, routingID: [UInt8]) {
        guard let store = snapshotRounds.answer(state.requestID) else { return }
        guard state.store == store, let worker = workerByRoutingID[routingID], membership.workers[worker]?.hosts(store) == true,
            UInt64(state.state.count) <= state.size, !state.state.isEmpty
        else {
            return dropMalformed("a snapshot of `\(state.store)` that does not match its request or its size", from: routingID)
        }
        // A state that includes the dispatch in flight is not history yet, and one no newer than the recorded snapshot
        // adds nothing: the next round will do.
        guard state.sequence <= lastCompleted, state.sequence > log.snapshots[store]?.sequence ?? 0 else { return }
        // Its action's row is committed (it completed), and may be compacted away after this snapshot: keep its chain.
        // Unread, the chain is 0 (unknown): a worker starting from the snapshot is then held to its epoch alone.
        let chain = readLog(to: "keep a snapshot's chain", otherwise: "the snapshot is kept with its chain unknown", [
            "store": "\(store)", "seq": "\(state.sequence)",
        ]) { try $0.loggedEntry(at: state.sequence)?.chain }
        let snapshot = LogSnapshot(
            store: store, sequence: state.sequence, digest: state.digest, checksum: state.checksum, size: state.size,
            worker: worker, chain: (try? chain.get()) ?? 0)
        log.beginSnapshot(store: store, sequence: state.sequence)
        log.writeSnapshotChunk(store: store, sequence: state.sequence, offset: 0, bytes: state.state)
        guard UInt64(state.state.count) < state.size else {
            guard StateDigest.fnv1a64(state.state) == state.checksum else {
                log.abandonSnapshot(store: store, sequence: state.sequence)
                return dropMalformed("a snapshot of `\(store)` whose bytes do not match its checksum", from: routingID)
            }
            return record(snapshot)
        }
        for pull in snapshotReceipts.open(state, as: snapshot, from: routingID, chunkSize: configuration.transferChunkBytes) {
            send(.pull(pull), to: routingID)
        }
        snapshotRounds.progressed(until: now.advanced(by: configuration.ackTimeout))
        logger.info("receiving a snapshot in chunks", metadata: ["store": "\(store)", "seq": "\(state.sequence)", "bytes": "\(state.size)"])
    }

    func receiveChunk(_ chunk: Message.Chunk, routingID: [UInt8]) {
        if snapshotReceipts.receives(chunk.transfer, from: routingID) {
            switch snapshotReceipts.accept(chunk) {
            case .more(let snapshot, let pulls):
                log.writeSnapshotChunk(store: snapshot.store, sequence: snapshot.sequence, offset: chunk.offset, bytes: chunk.bytes)
                // Commit chunk by chunk: the log's write buffer must not grow into a copy of the state.
                flushLog()
                for pull in pulls { send(.pull(pull), to: routingID) }
                snapshotRounds.progressed(until: now.advanced(by: configuration.ackTimeout))
            case .complete(let snapshot):
                log.writeSnapshotChunk(store: snapshot.store, sequence: snapshot.sequence, offset: chunk.offset, bytes: chunk.bytes)
                record(snapshot)
            case .failed(let snapshot, let reason):
                log.abandonSnapshot(store: snapshot.store, sequence: snapshot.sequence)
                dropMalformed("a snapshot of `\(snapshot.store)` in chunks: \(reason)", from: routingID)
            case nil:
                break
            }
            return
        }
        guard workerByRoutingID[routingID] != nil else { return dropMalformed("a CHUNK from a peer that is not a worker", from: routingID) }
        let end = chunk.offset + UInt64(chunk.bytes.count)
        if let requester = stateQueries.chunk(chunk.transfer, from: routingID, end: end, until: now.advanced(by: configuration.ackTimeout)) {
            var relayed = chunk
            relayed.transfer = requester.requestID
            return send(.chunk(relayed), to: requester.routingID)
        }
        // A late chunk of a transfer abandoned (its round ended, its client gave up): nothing to do.
        logger.debug("ignored a CHUNK of no open transfer", metadata: ["transfer": "\(chunk.transfer)"])
    }

    /// The replica no longer holds a state the coordinator was receiving: the previous snapshot stands, and the next
    /// round asks again.
    func abandonReceipt(_ error: Message.Error) {
        guard let snapshot = snapshotReceipts.abandon(error.requestID) else { return }
        log.abandonSnapshot(store: snapshot.store, sequence: snapshot.sequence)
        logger.notice("a replica dropped a snapshot mid-transfer; the next round asks again", metadata: [
            "store": "\(snapshot.store)", "reason": "\(error.message)",
        ])
    }

    /// Records a whole, checked snapshot as its store's, committed before any worker may PULL it.
    private func record(_ snapshot: LogSnapshot) {
        log.saveSnapshot(snapshot)
        flushLog()
        logger.info("recorded a snapshot", metadata: [
            "store": "\(snapshot.store)", "seq": "\(snapshot.sequence)", "bytes": "\(snapshot.size)", "worker": "\(snapshot.worker)",
        ])
    }

    // MARK: - Late answers and lost replicas

    /// Whether a worker's STATE or ERROR answers a state request of this coordinator's that is over (it expired, its
    /// replica was deemed lost, or an earlier incarnation asked): a healthy replica that was slow, not a malformed
    /// message, so it is dropped quietly and never counts toward quarantine.
    func isLateAnswer(_ requestID: String, from routingID: [UInt8]) -> Bool {
        guard let worker = workerByRoutingID[routingID],
            StateQueries.isQueryID(requestID) || SnapshotRounds.isQueryID(requestID)
        else { return false }
        logger.debug("dropped a late answer to a state request that is over", metadata: [
            "worker": "\(worker)", "request": "\(requestID)",
        ])
        return true
    }

    /// A replica lost or gone will not answer: its clients hear so now rather than at the state timeout, and a
    /// snapshot round stops waiting for it.
    func abandonStateRequests(askedOf workerID: String, reason: String) {
        snapshotRounds.abandon(askedOf: workerID)
        for requester in stateQueries.abandon(askedOf: workerID) {
            send(.error(.init(requestID: requester.requestID, code: .noLiveReplica, message:
                "worker `\(workerID)`, asked for the state, was lost or left (\(reason)) before its state arrived whole; "
                + "ask again")),
                to: requester.routingID)
        }
    }

    // MARK: - Sending a SNAPSHOT, and serving PULLs

    /// Sends a joining worker the SNAPSHOT header of a recorded snapshot, with its first chunk.
    func sendSnapshot(_ snapshot: LogSnapshot, to routingID: [UInt8]) {
        do {
            guard let first = try log.snapshotBytes(
                store: snapshot.store, sequence: snapshot.sequence, offset: 0, count: configuration.transferChunkBytes)
            else { return }
            send(.snapshot(.init(
                epoch: epoch, store: snapshot.store, sequence: snapshot.sequence, digest: snapshot.digest, size: snapshot.size,
                checksum: snapshot.checksum, chain: snapshot.chain, transfer: snapshot.transfer, state: first)), to: routingID)
        } catch {
            logger.error("cannot read a snapshot from the log", metadata: ["store": "\(snapshot.store)", "error": "\(error)"])
        }
    }

    /// Answers a PULL: for a snapshot, from the log; for a STATE a client receives, by asking the replica.
    func servePull(_ pull: Message.Pull, routingID: [UInt8]) {
        guard pull.maxBytes > 0, Int(pull.maxBytes) <= codec.limits.maxBytesField else {
            dropMalformed("a PULL for \(pull.maxBytes) bytes", from: routingID)
            return send(.error(.init(requestID: pull.transfer, code: .invalidRequest, message:
                "a PULL must ask for 1 to \(codec.limits.maxBytesField) bytes, not \(pull.maxBytes)")), to: routingID)
        }
        if let (store, sequence) = LogSnapshot.parse(transfer: pull.transfer), workerByRoutingID[routingID] != nil {
            do {
                if let bytes = try log.snapshotBytes(store: store, sequence: sequence, offset: pull.offset, count: Int(pull.maxBytes)) {
                    return send(.chunk(.init(transfer: pull.transfer, offset: pull.offset, bytes: bytes)), to: routingID)
                }
            } catch {
                logger.error("cannot read a snapshot from the log", metadata: ["store": "\(store)", "error": "\(error)"])
                return send(.error(.init(requestID: pull.transfer, code: .internal, message:
                    "the coordinator cannot read the snapshot of `\(store)` from its log: \(error)")), to: routingID)
            }
        } else if let query = stateQueries.pull(
            from: routingID, transfer: pull.transfer, until: now.advanced(by: configuration.ackTimeout))
        {
            return send(.pull(.init(transfer: query.queryID, offset: pull.offset, maxBytes: pull.maxBytes)), to: query.worker)
        }
        send(.error(.init(requestID: pull.transfer, code: .transferGone, message:
            "no transfer `\(pull.transfer)` is open here (finished, replaced or expired); ask again from the start")),
            to: routingID)
    }
}
