import Flux
import FluxBusProtocol
import Logging

/// Input from the coordinator: frames decoded, and each message handed to its rule.
extension WorkerEngine {
    func receive(_ frames: [[UInt8]], fromSubscriber: Bool) {
        guard phase != .stopped else { return }
        let messages: [Message]
        do {
            messages = try codec.decodeAll(frames)
        } catch {
            malformedCount += 1
            logger.warning("dropped a malformed message", metadata: ["reason": "\(error)", "total": "\(malformedCount)"])
            return
        }
        session.heard(at: now)
        // By index: a for-in loop would copy each message out of the array, retaining and releasing all its fields.
        for index in messages.indices {
            handle(messages[index], fromSubscriber: fromSubscriber)
            if phase == .stopped { return }
        }
    }

    func handle(_ message: Message, fromSubscriber: Bool) {
        switch message {
        case .welcome(let welcome):
            welcomed(welcome)
        case .reject(let reject):
            receive(reject)
        case .goodbye(let goodbye):
            // Already joining: the HELLO is on its way, and every heartbeat queued while the coordinator was away
            // earns a GOODBYE of its own; answering each with another HELLO would rejoin over and over.
            guard phase != .joining else { return }
            logger.notice("the coordinator asked this worker to join again", metadata: ["reason": "\(goodbye.reason)"])
            sayHello()
        case .action(let action):
            guard isCurrentEpoch(action.epoch, fromSubscriber: fromSubscriber) else { return }
            receive(action)
        case .release(let release):
            guard release.epoch == epoch else { return }
            receive(release)
        case .replay(let replay):
            guard replay.epoch == epoch else { return }
            apply(replay)
        case .heartbeat(let beat):
            guard isCurrentEpoch(beat.epoch, fromSubscriber: fromSubscriber) else { return }
            catchUp.heard(of: beat.sequence)
            fetchWhatIsMissing()
        case .completed(let completed):
            guard isCurrentEpoch(completed.epoch, fromSubscriber: fromSubscriber) else { return }
            catchUp.heardCompleted(completed.sequence)
            fetchWhatIsMissing()
        case .stateRequest(let request):
            answer(request)
        case .error(let error) where downloads.has(error.requestID):
            snapshotGone(error)
        case .error(let error):
            emit(.cascadeRefused(requestID: error.requestID, code: error.code, message: error.message))
            logger.warning("the coordinator refused a dispatch from a handler", metadata: [
                "request": "\(error.requestID)", "code": "\(error.code)", "message": "\(error.message)",
            ])
        case .result:
            break
        case .snapshot(let snapshot):
            receive(snapshot)
        case .pull(let pull):
            serve(pull)
        case .chunk(let chunk):
            receive(chunk)
        case .hello, .ready, .ack, .fetch, .dispatch, .dispatchBatch, .statusRequest, .status, .graphRequest, .graph, .state,
            .batchResult, .acks:
            malformedCount += 1
            logger.warning("dropped \(message.command), which a coordinator never sends to a worker")
        case .bundle, .actions, .completions:
            // decodeAll hands these on as the messages they hold: none reaches here.
            malformedCount += 1
            logger.warning("dropped \(message.command), not taken apart")
        }
    }
}
