import FluxBusProtocol

/// What happens to a worker: the inputs its engine handles, each at a time the shell (or the simulator) gives.
enum WorkerInput {
    /// Say HELLO: the DEALER is connected.
    case start
    /// One message from the coordinator: on the DEALER, or on the SUB stream when `fromSubscriber`.
    case message([[UInt8]], fromSubscriber: Bool)
    /// The heartbeat timer: heartbeats, liveness of the coordinator, re-fetches.
    case tick
    /// The checkpoint timer (``WorkerConfiguration/checkpointInterval``).
    case checkpointDue
    /// A graceful stop began: finish the dispatch in hand, say goodbye, stop.
    case shutdown
    /// The dispatch in hand did not finish in time after a graceful stop began: stop now.
    case shutdownOverdue(reason: String)
    /// The connection's security handshake failed: this worker cannot join as configured.
    case handshakeFailed(reason: String)
}

/// What a worker's engine asks its shell to do.
enum WorkerEffect {
    /// Send a message to the coordinator on the DEALER.
    case send(Message)
    /// Subscribe to the coordinator's stream at this endpoint, replacing any earlier subscription.
    case subscribe(String)
    /// Replace the checkpoint file with this checkpoint, durably.
    case writeCheckpoint(Checkpoint)
    /// Report an event to the worker's owner (and, for `applied`, the journal).
    case event(WorkerEvent)
    /// The worker stopped: with an error when it was refused or cannot go on.
    case stop(BusError?)
}
