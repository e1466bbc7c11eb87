import FluxBusProtocol

/// What happens to a coordinator: the inputs its engine handles, each at a time the shell (or the simulator) gives.
enum CoordinatorInput {
    /// One message from the ROUTER: the routing id frame, then the message's frames. With CURVE, `userID` is the
    /// name the ZAP handler bound to the sender's key. `peerAddress` is the sender's address where the transport
    /// gives one (tcp://), for naming the holder of a worker id in a refusal.
    case message([[UInt8]], userID: String?, peerAddress: String? = nil)
    /// The shell has handled everything waiting on the ROUTER: start what can start, committing the log first.
    case burstEnd
    /// The periodic timer (``CoordinatorConfiguration/tickInterval``): heartbeats, liveness, re-sends, deadlines,
    /// snapshots and compaction.
    case tick
    /// The window of the COMPLETEDs held for the next publication ended (``CoordinatorEngine/heldCompletionsUntil``):
    /// they go out now.
    case completedWindowEnded
    /// A graceful stop began: refuse new dispatches, finish those in hand.
    case shutdown
}

/// What a coordinator's engine asks its shell to do.
enum CoordinatorEffect {
    /// Send a message to one peer on the ROUTER.
    case send(Message, to: [UInt8])
    /// Publish a message on the PUB stream.
    case publish(Message)
    /// The log cannot be written: stop the coordinator, with this error.
    case storageFailed(BusError)
    /// Make the log's last commit durable (``CoordinatorEngine/syncLog()``), then carry out what follows: the ACTIONs
    /// before it travel while the disk syncs, and nothing after it goes out before the sync is done.
    case syncLog
}
