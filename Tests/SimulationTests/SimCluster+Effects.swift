import Flux
@testable import FluxBus
import FluxBusProtocol

/// What the engines' effects do on the simulated network: sends with latency and FIFO per connection, PUB with
/// loss, checkpoints to the simulated disk; and how a step is described in a trace.
extension SimCluster {
    func perform(_ effects: [CoordinatorEffect]) {
        defer { setCompletedWindow() }
        for effect in effects {
            switch effect {
            case .send(let message, let routingID):
                let frames = codec.encode(message)
                checker.coordinatorSent(message)
                checkDurable(message)
                if let index = workers.firstIndex(where: { $0.routingID == routingID }) {
                    watchesDirectSends?(message, index)
                    // A ROUTER drops what it sends to a peer with no connection up.
                    if faults.dealerQueues, !workers[index].dealerUp || workers[index].partitioned { continue }
                    deliver(.toWorker(index, frames, fromSubscriber: false, generation: workers[index].generation), link: 3 * index)
                } else if let index = clients.firstIndex(where: { $0.routingID == routingID }) {
                    deliver(.toClient(index, frames, generation: clients[index].generation), link: 100 + index)
                } else if routingID == reader.routingID {
                    deliver(.toReader(frames, generation: reader.generation), link: 300)
                }
            case .publish(let message):
                let frames = codec.encode(message)
                checker.coordinatorSent(message)
                checkDurable(message)
                for index in workers.indices where workers[index].subscriptionReady && !workers[index].partitioned {
                    if faults.publishLoss > 0, Double.random(in: 0..<1, using: &random) < faults.publishLoss { continue }
                    if losesPublished?(message, index) == true { continue }
                    deliver(.toWorker(index, frames, fromSubscriber: true, generation: workers[index].generation), link: 3 * index + 1)
                }
            case .syncLog:
                // Nothing after the sync goes out when it fails, or when a fault strikes while it hangs.
                guard performSync() else { return }
            case .storageFailed(let error):
                operatorSees(error)
                checker.note("the coordinator stops: \(error.message)")
                if let coordinator { checker.stoppedOnStorageFailure(waiting: coordinator.waitingRequesters, effects: effects) }
                crashCoordinator()
            }
        }
    }

    /// Sets the timer for the COMPLETEDs the coordinator holds, as its shell does. Unlike the shell's, it is not
    /// cancelled when they go out sooner: then it finds nothing to publish, which the engine must take calmly.
    private func setCompletedWindow() {
        guard !completedWindowSet, let until = coordinator?.heldCompletionsUntil else { return }
        completedWindowSet = true
        agenda.schedule(.completedWindow(incarnation: coordinatorIncarnation), at: max(now, until.nanoseconds / 1_000))
    }

    func perform(_ effects: [WorkerEffect], worker index: Int) {
        if diedInHandler(index) { return }
        for effect in effects {
            switch effect {
            case .send(let message):
                checker.acknowledgedAll(in: message, by: workers[index].id)
                if faults.dealerQueues {
                    sendThroughDealer(message, worker: index)
                    continue
                }
                guard !workers[index].partitioned else { continue }
                checker.workerSent(message)
                deliver(.toCoordinator(codec.encode(message).prepended(workers[index].routingID),
                                       link: .worker(index, generation: workers[index].generation)), link: 3 * index + 2)
            case .subscribe:
                workers[index].subscribed = true
                agenda.schedule(
                    .subscriptionUp(index, incarnation: workers[index].incarnation),
                    at: now + Int64.random(in: 1_000...200_000, using: &random))
            case .writeCheckpoint(let draft):
                // The shell encodes and writes it on another thread; a crash before it lands is a crash before it was
                // taken, so here it lands at once.
                workers[index].checkpoint = try! draft.encoded()
            case .event(.applied(let sequence, let store, let status)):
                checker.applied(by: workers[index].id, sequence: sequence, store: store, status: status)
            case .event(.rejected(let code, _)) where code == .aheadOfLog && operatorRecoversFromAheadWorkers:
                refusedAheadOfLog.insert(index)
            case .event(.snapshotInstalled):
                checker.transfers["snapshots installed", default: 0] += 1
            case .event:
                break
            case .encodeState(let requestID, let copy):
                // Encoded now, from the copy taken at the request's sequence; handed back later, as from another thread.
                schedule(.workerEncoded(index, incarnation: workers[index].incarnation, requestID: requestID, EncodedState.encode(copy)),
                         after: Int64.random(in: encodeTime, using: &random))
            case .stop(let error) where refusedAheadOfLog.remove(index) != nil:
                restartEmpty(index, refused: error)
            case .stop(let error?) where error.message.contains("the coordinator now has another action as"):
                // It ran an action the log lost; its supervisor restarts it (exit 4), from its checkpoint or empty.
                checker.note("\(self.workers[index].id) stops: \(error.message)")
                crashWorker(index)
                schedule(.workerRestart(index), after: 500_000)
            case .stop(let error):
                if let error { checker.fail("worker \(workers[index].id) stopped: \(error.message)") }
                workers[index].engine = nil
            }
        }
    }

    /// Sends from a client to the coordinator.
    func send(_ message: Message, from client: SimClient) {
        deliver(.toCoordinator(codec.encode(message).prepended(client.routingID),
                               link: .client(client.index, generation: client.generation)), link: 200 + client.index)
    }

    /// Sends from the state reader to the coordinator.
    func sendFromReader(_ message: Message) {
        deliver(.toCoordinator(codec.encode(message).prepended(reader.routingID), link: .reader(generation: reader.generation)), link: 301)
    }

    func schedule(_ event: Event, after micros: Int64) { agenda.schedule(event, at: now + micros) }

    func deliver(_ event: Event, link: Int) {
        let latency = Int64.random(in: faults.latency, using: &random)
        let arrival = max(lastArrival[link] ?? 0, now + latency)
        lastArrival[link] = arrival
        agenda.schedule(event, at: arrival)
    }

    func describe(_ event: Event) -> String {
        switch event {
        case .toCoordinator(let frames, let link): "→coordinator from \(link): \(summary(Array(frames.dropFirst())))"
        case .toWorker(let index, let frames, let sub, _): "→w\(index + 1)\(sub ? " (sub)" : ""): \(summary(frames))"
        case .toClient(let index, let frames, _): "→client\(index): \(summary(frames))"
        case .toReader(let frames, _): "→reader: \(summary(frames))"
        default: "\(event)"
        }
    }

    func summary(_ frames: [[UInt8]]) -> String {
        guard let messages = try? codec.decodeAll(frames) else { return "malformed" }
        return messages.prefix(3).map { SimChecker.brief($0) }.joined(separator: ", ") + (messages.count > 3 ? " …(\(messages.count))" : "")
    }
}
