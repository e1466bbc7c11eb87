import Flux
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
    /// A state copied for a STATE_REQUEST was encoded (off the I/O thread), or could not be.
    case stateEncoded(requestID: String, Result<EncodedState, BusError>)
}

/// A store state's bytes and their FNV-1a 64 checksum, computed together off the I/O thread.
struct EncodedState: Sendable {
    let bytes: [UInt8]
    let checksum: UInt64

    /// Encodes `copy`: the work the shell does on its encoding queue, and the simulator in line.
    static func encode(_ copy: StoreStateCopy) -> Result<EncodedState, BusError> {
        do {
            let bytes = try copy.encoded()
            return .success(EncodedState(bytes: bytes, checksum: StateDigest.fnv1a64(bytes)))
        } catch {
            return .failure(BusError(code: .usage, message: "\(error)"))
        }
    }
}

/// What a worker's engine asks its shell to do.
enum WorkerEffect {
    /// Send a message to the coordinator on the DEALER.
    case send(Message)
    /// Subscribe to the coordinator's stream at this endpoint, replacing any earlier subscription.
    case subscribe(String)
    /// Replace the checkpoint file with this checkpoint, durably.
    case writeCheckpoint(CheckpointDraft)
    /// Report an event to the worker's owner (and, for `applied`, the journal).
    case event(WorkerEvent)
    /// The worker stopped: with an error when it was refused or cannot go on.
    case stop(BusError?)
    /// Encode this copy of a store's state away from the I/O thread, then hand it back as ``WorkerInput/stateEncoded(requestID:_:)``.
    case encodeState(requestID: String, StoreStateCopy)
}
