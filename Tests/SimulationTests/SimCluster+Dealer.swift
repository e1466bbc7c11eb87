import Flux
@testable import FluxBus
import FluxBusProtocol

/// A worker's DEALER, when ``FaultPlan/dealerQueues`` is on. What a worker sends while its connection to the
/// coordinator is down (a coordinator crash, a partition) waits in the socket and goes, in order, when the connection
/// comes up, as libzmq's DEALER does with `ZMQ_IMMEDIATE` 0, the worker's setting: the new coordinator then receives
/// HEARTBEATs, ACKs and FETCHes meant for the one before it. The worker's own ``HelloGate`` decides which HELLOs the
/// socket takes. The other way, the coordinator's ROUTER drops what it sends a worker whose connection is down, a
/// partition included. With the plan's flag off, a worker's send over a connection that is down is lost, as the TCP
/// connection's bytes are, and the coordinator's direct sends reach a partitioned worker.
extension SimCluster {
    /// libzmq's default send high-water mark; a send beyond it fails, and the shell drops what it tried to send.
    static let dealerHighWaterMark = 1_000

    /// How the scenarios control the HELLO rule of each worker's DEALER.
    enum HelloRule {
        /// The worker's rule (``HelloGate``).
        case gated
        /// Every HELLO the engine makes is sent: the worker before the gate.
        case ungated
        /// The gate without counting the held HELLO as sent when it leaves (``HelloGate/forgetsTheHeldHello``).
        case forgettingTheHeldHello
    }

    /// Sends `message` from worker `index` through its DEALER: at once, queued until its connection is up, or, past
    /// the high-water mark or refused by the HELLO gate, not at all.
    func sendThroughDealer(_ message: Message, worker index: Int) {
        if case .hello = message, helloRule != .ungated, workers[index].hellos.admitHello(at: time) != .send { return }
        checker.workerSent(message)
        let frames = codec.encode(message).prepended(workers[index].routingID)
        if workers[index].dealerUp, !workers[index].partitioned {
            deliver(.toCoordinator(frames, link: .worker(index, generation: workers[index].generation)), link: 3 * index + 2)
        } else if workers[index].dealerQueue.count < Self.dealerHighWaterMark {
            workers[index].dealerQueue.append(frames)
        } else {
            dealerDrops += 1
        }
    }

    /// A new DEALER for a starting worker: connected at once if the coordinator is up (the link's latency stands for
    /// the handshake), its queue empty.
    func openDealer(_ index: Int) {
        var gate = HelloGate(holdsQueuedHellos: true)
        #if DEBUG
        gate.forgetsTheHeldHello = helloRule == .forgettingTheHeldHello
        #endif
        workers[index].dealerQueue = []
        workers[index].dealerUp = coordinator != nil
        gate.connectionChanged(up: coordinator != nil, at: time)
        workers[index].hellos = gate
    }

    /// The connection of worker `index` went down: what is on the wire is lost (the link's generation moved), and
    /// what the worker sends from now on waits in its DEALER.
    func dealerDisconnected(_ index: Int) {
        guard faults.dealerQueues else { return }
        workers[index].dealerUp = false
        workers[index].hellos.connectionChanged(up: false, at: time)
    }

    /// libzmq reconnects by itself, every 100 ms by default: the connection of worker `index` comes up within that,
    /// plus the handshake.
    func scheduleDealerReconnect(_ index: Int) {
        guard faults.dealerQueues, workers[index].engine != nil else { return }
        agenda.schedule(
            .dealerConnected(index, incarnation: workers[index].incarnation, coordinator: coordinatorIncarnation),
            at: now + Int64.random(in: dealerReconnect, using: &random))
    }

    /// The connection came up: the queued messages leave first, in order, on the connection's current generation.
    func dealerConnected(_ index: Int, incarnation: Int, coordinator coordinatorIncarnation: Int) {
        guard workers[index].engine != nil, incarnation == workers[index].incarnation, coordinator != nil,
            coordinatorIncarnation == self.coordinatorIncarnation, !workers[index].partitioned, !workers[index].dealerUp
        else { return }
        workers[index].dealerUp = true
        workers[index].hellos.connectionChanged(up: true, at: time)
        let queued = workers[index].dealerQueue
        workers[index].dealerQueue = []
        checker.note("w\(index + 1)'s DEALER connected: \(queued.count) queued message(s) leave")
        dealerQueuedSent += queued.count
        for frames in queued {
            deliver(.toCoordinator(frames, link: .worker(index, generation: workers[index].generation)), link: 3 * index + 2)
        }
    }
}
