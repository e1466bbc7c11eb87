// Joining, liveness and leaving: HELLO, WELCOME, REJECT, READY, HEARTBEAT, GOODBYE.
// Each body's `visit` is its wire layout, field by field.

extension Message {
    /// HELLO (0x01), worker → coordinator over DEALER: join with the stores this process hosts.
    public struct Hello: Sendable, Hashable {
        /// The worker's stable id; also its DEALER routing id.
        public var workerID: String
        /// Random per process start, so the coordinator tells a restart from a duplicate.
        public var instance: UInt64
        /// The stores the worker hosts.
        public var stores: [StoreDeclaration]
        /// The worker's applied sequence: the smallest of its stores' `lastApplied`.
        public var applied: UInt64
        /// The log chain at `applied` as the worker computed it from what it applied (``LogChain``); 0 when it does not
        /// know it (it installed a SNAPSHOT, or resumed from a checkpoint without one).
        public var chain: UInt64
        /// The epoch of the coordinator that sent the worker the entry at `applied` (its ACTION, REPLAY or SNAPSHOT);
        /// 0 when it does not know it. A log whose entry at `applied` was logged in a later epoch lost the one the
        /// worker applied and logged another there, even if the two read the same.
        public var appliedEpoch: UInt64
        /// The handler this worker's previous process died in, if it died in one (a trap, a fault, an abort), as the
        /// process recorded it: the coordinator counts these to mark a poison action. Nil when the last run did not.
        public var crash: HandlerCrash?

        /// A HELLO with the given fields.
        public init(
            workerID: String, instance: UInt64, stores: [StoreDeclaration], applied: UInt64 = 0, chain: UInt64 = 0,
            appliedEpoch: UInt64 = 0, crash: HandlerCrash? = nil
        ) {
            self.workerID = workerID
            self.instance = instance
            self.stores = stores
            self.applied = applied
            self.chain = chain
            self.appliedEpoch = appliedEpoch
            self.crash = crash
        }
    }

    /// WELCOME (0x02), coordinator → worker over ROUTER: the join is accepted.
    public struct Welcome: Sendable, Hashable {
        /// The coordinator's current epoch.
        public var epoch: UInt64
        /// The last completed sequence; the worker catches up to it.
        public var sequence: UInt64
        /// Where to connect the SUB socket.
        public var publishEndpoint: String
        /// How often each side heartbeats when otherwise silent.
        public var heartbeatMillis: UInt32
        /// Silence after which a peer is considered lost.
        public var deadlineMillis: UInt32

        /// A WELCOME with the given fields.
        public init(epoch: UInt64, sequence: UInt64, publishEndpoint: String, heartbeatMillis: UInt32, deadlineMillis: UInt32) {
            self.epoch = epoch
            self.sequence = sequence
            self.publishEndpoint = publishEndpoint
            self.heartbeatMillis = heartbeatMillis
            self.deadlineMillis = deadlineMillis
        }
    }

    /// REJECT (0x03), coordinator → worker over ROUTER: the join (or the worker) is refused.
    public struct Reject: Sendable, Hashable {
        /// Why, as a number a program can act on.
        public var code: Code
        /// Why, in words an operator can act on.
        public var reason: String

        /// A REJECT with the given fields.
        public init(code: Code, reason: String) {
            self.code = code
            self.reason = reason
        }

        /// A REJECT code (u16). Unknown codes are valid on the wire and mean "refused".
        public struct Code: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
            /// The code's number.
            public var rawValue: UInt16
            /// The code with this number.
            public init(rawValue: UInt16) { self.rawValue = rawValue }

            /// 1: the HELLO's protocol version is not the coordinator's.
            public static let versionMismatch = Code(rawValue: 1)
            /// 2: the declared dependencies would form a cycle.
            public static let cycle = Code(rawValue: 2)
            /// 3: a store's declaration disagrees with the one the bus already has.
            public static let topologyConflict = Code(rawValue: 3)
            /// 4: a declaration is malformed (empty name, unknown dependency, …).
            public static let invalidDeclaration = Code(rawValue: 4)
            /// 5: a live worker with this id has another instance, and it was heard through a whole deadline of this
            /// instance's claims: it is alive. Final.
            public static let duplicateWorker = Code(rawValue: 5)
            /// 6: a replica is behind the retained history and no snapshot can be had.
            public static let behindWindow = Code(rawValue: 6)
            /// 7: the worker's key or id is not admitted.
            public static let unauthorized = Code(rawValue: 7)
            /// 8: a limit (workers, stores, replicas) would be exceeded.
            public static let tooMany = Code(rawValue: 8)
            /// 9: the worker applied sequences beyond the coordinator's log: the log lost them (a replaced or
            /// restored data directory, or an in-memory log that restarted).
            public static let aheadOfLog = Code(rawValue: 9)
            /// 10: a live or joining worker with this id has another instance, which may have crashed (its
            /// registration lapses after the coordinator's deadline): HELLO again later.
            public static let workerIDBusy = Code(rawValue: 10)
            /// 11: the coordinator could not read its log to check the worker's history against it: HELLO again
            /// later. Nothing about the worker is decided.
            public static let logUnreadable = Code(rawValue: 11)

            /// The code's name, such as `version mismatch`, or its number when unknown.
            public var description: String {
                switch rawValue {
                case 1: "version mismatch"
                case 2: "cycle"
                case 3: "topology conflict"
                case 4: "invalid declaration"
                case 5: "duplicate worker"
                case 6: "behind window"
                case 7: "unauthorized"
                case 8: "too many"
                case 9: "ahead of log"
                case 10: "worker id busy"
                case 11: "log unreadable"
                default: "code \(rawValue)"
                }
            }
        }
    }

    /// READY (0x04), worker → coordinator over DEALER: caught up and receiving on SUB.
    public struct Ready: Sendable, Hashable {
        /// The epoch of the WELCOME this answers.
        public var epoch: UInt64
        /// The last sequence the worker applied.
        public var lastApplied: UInt64

        /// A READY with the given fields.
        public init(epoch: UInt64, lastApplied: UInt64) {
            self.epoch = epoch
            self.lastApplied = lastApplied
        }
    }

    /// HEARTBEAT (0x0A): the coordinator's on PUB when idle, a worker's over DEALER when silent.
    public struct Heartbeat: Sendable, Hashable {
        /// The sender's epoch (a worker sends the epoch of its WELCOME).
        public var epoch: UInt64
        /// Coordinator: the last sequence published. Worker: the last sequence applied.
        public var sequence: UInt64

        /// A HEARTBEAT with the given fields.
        public init(epoch: UInt64, sequence: UInt64) {
            self.epoch = epoch
            self.sequence = sequence
        }
    }

    /// GOODBYE (0x0B), either way: the sender is leaving, or (from the coordinator) the
    /// receiver is no longer registered and must send HELLO again.
    public struct Goodbye: Sendable, Hashable {
        /// Why, for the log.
        public var reason: String

        /// A GOODBYE with the given reason.
        public init(reason: String) {
            self.reason = reason
        }
    }
}

extension Message.Hello: WireItem {
    package init() { self.init(workerID: "", instance: 0, stores: []) }

    package mutating func visit<V: WireVisitor>(_ visitor: inout V) throws(V.Failure) {
        try visitor.string(&workerID, "workerID")
        try visitor.u64(&instance, "instance")
        try visitor.list(&stores, "stores")
        try visitor.u64(&applied, "applied")
        try visitor.u64(&chain, "chain")
        try visitor.u64(&appliedEpoch, "appliedEpoch")
        // On the wire the three fields are always there: sequence 0 means no crash.
        var crashed = crash ?? HandlerCrash(sequence: 0, store: "", signal: "")
        try visitor.u64(&crashed.sequence, "crashSequence")
        try visitor.string(&crashed.store, "crashStore")
        try visitor.string(&crashed.signal, "crashSignal")
        // Decoding is exact: a sequence of 0 with text beside it (which no worker sends) keeps the text, and the
        // coordinator ignores a crash at sequence 0.
        crash = crashed.sequence == 0 && crashed.store.isEmpty && crashed.signal.isEmpty ? nil : crashed
    }
}

extension Message.Welcome: WireItem {
    package init() { self.init(epoch: 0, sequence: 0, publishEndpoint: "", heartbeatMillis: 0, deadlineMillis: 0) }

    package mutating func visit<V: WireVisitor>(_ visitor: inout V) throws(V.Failure) {
        try visitor.u64(&epoch, "epoch")
        try visitor.u64(&sequence, "sequence")
        try visitor.string(&publishEndpoint, "publishEndpoint")
        try visitor.u32(&heartbeatMillis, "heartbeatMillis")
        try visitor.u32(&deadlineMillis, "deadlineMillis")
    }
}

extension Message.Reject: WireItem {
    package init() { self.init(code: Code(rawValue: 0), reason: "") }

    package mutating func visit<V: WireVisitor>(_ visitor: inout V) throws(V.Failure) {
        try visitor.u16(&code.rawValue, "code")
        try visitor.string(&reason, "reason")
    }
}

extension Message.Ready: WireItem {
    package init() { self.init(epoch: 0, lastApplied: 0) }

    package mutating func visit<V: WireVisitor>(_ visitor: inout V) throws(V.Failure) {
        try visitor.u64(&epoch, "epoch")
        try visitor.u64(&lastApplied, "lastApplied")
    }
}

extension Message.Heartbeat: WireItem {
    package init() { self.init(epoch: 0, sequence: 0) }

    package mutating func visit<V: WireVisitor>(_ visitor: inout V) throws(V.Failure) {
        try visitor.u64(&epoch, "epoch")
        try visitor.u64(&sequence, "sequence")
    }
}

extension Message.Goodbye: WireItem {
    package init() { self.init(reason: "") }

    package mutating func visit<V: WireVisitor>(_ visitor: inout V) throws(V.Failure) {
        try visitor.string(&reason, "reason")
    }
}
