// Submitting actions and hearing how they went: DISPATCH, RESULT, ERROR, COMPLETED.
// Each body's `visit` is its wire layout, field by field.

extension Message {
    /// DISPATCH (0x10), client or worker → coordinator over DEALER: queue this action.
    public struct Dispatch: Sendable, Hashable {
        /// Chosen by the requester, unique per request; a retry with the same id gets the
        /// original result instead of a second dispatch.
        public var requestID: String
        /// The action's type.
        public var actionType: String
        /// The action's payload (JSON by convention).
        public var payload: [UInt8]
        /// The action's error, if it carries one.
        public var error: String?
        /// A W3C `traceparent` (`00-<32 hex trace id>-<16 hex parent span id>-<2 hex flags>`) to trace this dispatch
        /// under: the RESULT then carries its waterfall. Empty (the default) for an untraced dispatch.
        public var traceparent: String

        /// A DISPATCH with the given fields.
        public init(requestID: String, actionType: String, payload: [UInt8], error: String? = nil, traceparent: String = "") {
            self.requestID = requestID
            self.actionType = actionType
            self.payload = payload
            self.error = error
            self.traceparent = traceparent
        }
    }

    /// RESULT (0x11), coordinator → requester over ROUTER: the dispatch completed.
    public struct Result: Sendable, Hashable {
        /// The DISPATCH's request id.
        public var requestID: String
        /// The epoch the dispatch ran under.
        public var epoch: UInt64
        /// The sequence it was given.
        public var sequence: UInt64
        /// Microseconds from publishing the ACTION to completing it.
        public var elapsedMicros: UInt64
        /// One outcome per planned store and replica.
        public var outcomes: [Outcome]
        /// A traced dispatch's waterfall, on the coordinator's clock from its receipt of the DISPATCH; empty when the
        /// DISPATCH carried no `traceparent`.
        public var trace: [TraceStep]

        /// A RESULT with the given fields.
        public init(
            requestID: String, epoch: UInt64, sequence: UInt64, elapsedMicros: UInt64, outcomes: [Outcome], trace: [TraceStep] = []
        ) {
            self.requestID = requestID
            self.epoch = epoch
            self.sequence = sequence
            self.elapsedMicros = elapsedMicros
            self.outcomes = outcomes
            self.trace = trace
        }
    }

    /// ERROR (0x12), coordinator → requester over ROUTER (and worker → coordinator for a
    /// forwarded STATE_REQUEST it cannot answer): the request failed.
    public struct Error: Sendable, Hashable {
        /// The failed request's id.
        public var requestID: String
        /// Why, as a number a program can act on.
        public var code: Code
        /// Why, in words an operator can act on.
        public var message: String

        /// An ERROR with the given fields.
        public init(requestID: String, code: Code, message: String) {
            self.requestID = requestID
            self.code = code
            self.message = message
        }

        /// An ERROR code (u16). Unknown codes are valid on the wire and mean "failed".
        public struct Code: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
            /// The code's number.
            public var rawValue: UInt16
            /// The code with this number.
            public init(rawValue: UInt16) { self.rawValue = rawValue }

            /// 1: the dispatch queue is full; retry later.
            public static let busy = Code(rawValue: 1)
            /// 2: the request is malformed (empty action type, …).
            public static let invalidRequest = Code(rawValue: 2)
            /// 3: no such store.
            public static let unknownStore = Code(rawValue: 3)
            /// 4: the requester is not admitted.
            public static let unauthorized = Code(rawValue: 4)
            /// 5: the coordinator is shutting down.
            public static let shuttingDown = Code(rawValue: 5)
            /// 6: the store has no live replica to answer.
            public static let noLiveReplica = Code(rawValue: 6)
            /// 7: the coordinator failed internally (for example, its log).
            public static let `internal` = Code(rawValue: 7)
            /// 8: the answer did not come in time.
            public static let timeout = Code(rawValue: 8)
            /// 9: the request id was used before for other actions or another payload.
            public static let requestIDReused = Code(rawValue: 9)
            /// 10: a PULL named a transfer its sender no longer holds (expired, replaced, or the sender restarted);
            /// the receiver abandons it and asks again from the start.
            public static let transferGone = Code(rawValue: 10)
            /// 11: no store can run the action (none handles its type, or those that do wait for a store nobody
            /// hosts); sent only by a coordinator that refuses such dispatches.
            public static let unhandled = Code(rawValue: 11)

            /// The code's name, such as `busy`, or its number when unknown.
            public var description: String {
                switch rawValue {
                case 1: "busy"
                case 2: "invalid request"
                case 3: "unknown store"
                case 4: "unauthorized"
                case 5: "shutting down"
                case 6: "no live replica"
                case 7: "internal"
                case 8: "timeout"
                case 9: "request id reused"
                case 10: "transfer gone"
                case 11: "unhandled"
                default: "code \(rawValue)"
                }
            }
        }
    }

    /// COMPLETED (0x19), coordinator → everyone on PUB: a dispatch completed (what `tail` shows).
    public struct Completed: Sendable, Hashable {
        /// The epoch the dispatch ran under.
        public var epoch: UInt64
        /// Its sequence.
        public var sequence: UInt64
        /// Its action type.
        public var actionType: String
        /// Microseconds from publishing the ACTION to completing it.
        public var elapsedMicros: UInt64
        /// One outcome per planned store and replica.
        public var outcomes: [Outcome]

        /// A COMPLETED with the given fields.
        public init(epoch: UInt64, sequence: UInt64, actionType: String, elapsedMicros: UInt64, outcomes: [Outcome]) {
            self.epoch = epoch
            self.sequence = sequence
            self.actionType = actionType
            self.elapsedMicros = elapsedMicros
            self.outcomes = outcomes
        }
    }
}

extension Message.Dispatch: WireItem {
    package init() { self.init(requestID: "", actionType: "", payload: []) }

    package mutating func visit<V: WireVisitor>(_ visitor: inout V) throws(V.Failure) {
        try visitor.string(&requestID, "requestID")
        try visitor.string(&actionType, "actionType")
        try visitor.bytes(&payload, "payload")
        try visitor.optionalString(&error, "error")
        try visitor.string(&traceparent, "traceparent")
    }
}

extension Message.Result: WireItem {
    package init() { self.init(requestID: "", epoch: 0, sequence: 0, elapsedMicros: 0, outcomes: []) }

    package mutating func visit<V: WireVisitor>(_ visitor: inout V) throws(V.Failure) {
        try visitor.string(&requestID, "requestID")
        try visitor.u64(&epoch, "epoch")
        try visitor.u64(&sequence, "sequence")
        try visitor.u64(&elapsedMicros, "elapsedMicros")
        try visitor.list(&outcomes, "outcomes")
        try visitor.list(&trace, "trace")
    }
}

extension Message.Error: WireItem {
    package init() { self.init(requestID: "", code: Code(rawValue: 0), message: "") }

    package mutating func visit<V: WireVisitor>(_ visitor: inout V) throws(V.Failure) {
        try visitor.string(&requestID, "requestID")
        try visitor.u16(&code.rawValue, "code")
        try visitor.string(&message, "message")
    }
}

extension Message.Completed: WireItem {
    package init() { self.init(epoch: 0, sequence: 0, actionType: "", elapsedMicros: 0, outcomes: []) }

    package mutating func visit<V: WireVisitor>(_ visitor: inout V) throws(V.Failure) {
        try visitor.u64(&epoch, "epoch")
        try visitor.u64(&sequence, "sequence")
        try visitor.string(&actionType, "actionType")
        try visitor.u64(&elapsedMicros, "elapsedMicros")
        try visitor.list(&outcomes, "outcomes")
    }
}
