/// The start of a client's request, read without decoding the rest: enough to answer a request that is refused
/// because it is over a limit, which the decoder rejects as a whole.
///
/// ```swift
/// if let header = Codec.requestHeader(of: frames), let id = header.requestID {
///     reply(.error(.init(requestID: id, code: .invalidRequest, message: "too large")))
/// }
/// ```
public struct RequestHeader: Sendable, Hashable {
    /// The request's command: DISPATCH, DISPATCH_BATCH, STATUS_REQUEST, GRAPH_REQUEST or STATE_REQUEST.
    public let command: Command
    /// The request id, when it is whole, valid UTF-8 and within the limit on strings; nil otherwise.
    public let requestID: String?
    /// The request id's length in bytes, as announced.
    public let requestIDBytes: Int
}

extension Codec {
    /// The requests whose body starts with their request id: the ones a client sends and waits on.
    static let requestCommands: Set<Command> = [.dispatch, .dispatchBatch, .statusRequest, .graphRequest, .stateRequest]

    /// The command and request id at the start of a client's request, checked only as far as they go; nil when
    /// `frames` are not a request of this version, or too short to name their request id's length.
    ///
    /// - Parameter frames: every frame received, without the ROUTER's routing-id frame.
    public func requestHeader(of frames: some Collection<[UInt8]>) -> RequestHeader? {
        guard frames.count == Limits.maxMessageFrames, frames.first == Self.signature, let body = frames.dropFirst().first,
            body.count >= 3, let command = Command(rawValue: body[0]), Self.requestCommands.contains(command)
        else { return nil }
        let length = Int(body[1]) << 8 | Int(body[2])
        var requestID: String?
        if length <= limits.maxStringBytes, 3 + length <= body.count {
            requestID = String(validating: body[3..<3 + length], as: UTF8.self)
        }
        return RequestHeader(command: command, requestID: requestID, requestIDBytes: length)
    }
}
