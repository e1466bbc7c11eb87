/// The command byte that opens frame 1 and names the message.
///
/// `description` is the command's protocol name, such as `HELLO` or `STATUS_REQUEST`, for logs.
public enum Command: UInt8, CaseIterable, Sendable, Hashable, CustomStringConvertible {
    case hello = 0x01
    case welcome = 0x02
    case reject = 0x03
    case ready = 0x04
    case action = 0x05
    case release = 0x06
    case ack = 0x07
    case fetch = 0x08
    case replay = 0x09
    case heartbeat = 0x0A
    case goodbye = 0x0B
    case snapshot = 0x0C
    case dispatch = 0x10
    case result = 0x11
    case error = 0x12
    case statusRequest = 0x13
    case status = 0x14
    case graphRequest = 0x15
    case graph = 0x16
    case stateRequest = 0x17
    case state = 0x18
    case completed = 0x19
    case dispatchBatch = 0x1A
    case batchResult = 0x1B
    case bundle = 0x1C
    case pull = 0x1D
    case chunk = 0x1E
    case actions = 0x1F
    case acks = 0x20
    case completions = 0x21

    /// The protocol name of the command, as `docs/PROTOCOL.md` spells it.
    public var name: String {
        switch self {
        case .hello: "HELLO"
        case .welcome: "WELCOME"
        case .reject: "REJECT"
        case .ready: "READY"
        case .action: "ACTION"
        case .release: "RELEASE"
        case .ack: "ACK"
        case .fetch: "FETCH"
        case .replay: "REPLAY"
        case .heartbeat: "HEARTBEAT"
        case .goodbye: "GOODBYE"
        case .snapshot: "SNAPSHOT"
        case .dispatch: "DISPATCH"
        case .result: "RESULT"
        case .error: "ERROR"
        case .statusRequest: "STATUS_REQUEST"
        case .status: "STATUS"
        case .graphRequest: "GRAPH_REQUEST"
        case .graph: "GRAPH"
        case .stateRequest: "STATE_REQUEST"
        case .state: "STATE"
        case .completed: "COMPLETED"
        case .dispatchBatch: "DISPATCH_BATCH"
        case .batchResult: "BATCH_RESULT"
        case .bundle: "BUNDLE"
        case .pull: "PULL"
        case .chunk: "CHUNK"
        case .actions: "ACTIONS"
        case .acks: "ACKS"
        case .completions: "COMPLETIONS"
        }
    }

    /// The protocol name, for example `HELLO`.
    public var description: String { name }
}
