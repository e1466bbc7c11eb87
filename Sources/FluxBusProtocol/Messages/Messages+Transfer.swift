// Moving a state larger than one message: PULL and CHUNK, after a SNAPSHOT or STATE opened the transfer.
// Each body's `visit` is its wire layout, field by field.

extension Message {
    /// PULL (0x1D), a transfer's receiver → its sender: send the bytes of `transfer` from `offset`, at most
    /// `maxBytes` of them. A receiver keeps a bounded window of PULLs outstanding; that is the flow control.
    public struct Pull: Sendable, Hashable {
        /// The transfer: a SNAPSHOT's `transfer`, or a STATE's `requestID`.
        public var transfer: String
        /// The first byte wanted.
        public var offset: UInt64
        /// The most bytes wanted; the sender may send fewer (its own chunk size), never more.
        public var maxBytes: UInt32

        /// A PULL with the given fields.
        public init(transfer: String, offset: UInt64, maxBytes: UInt32) {
            self.transfer = transfer
            self.offset = offset
            self.maxBytes = maxBytes
        }
    }

    /// CHUNK (0x1E), a transfer's sender → its receiver, answering one PULL: the bytes at `offset`.
    public struct Chunk: Sendable, Hashable {
        /// The PULL's transfer.
        public var transfer: String
        /// Where `bytes` start in the whole state.
        public var offset: UInt64
        /// The bytes: empty only at or past the end.
        public var bytes: [UInt8]

        /// A CHUNK with the given fields.
        public init(transfer: String, offset: UInt64, bytes: [UInt8]) {
            self.transfer = transfer
            self.offset = offset
            self.bytes = bytes
        }
    }
}

extension Message.Pull: WireItem {
    package init() { self.init(transfer: "", offset: 0, maxBytes: 0) }

    package mutating func visit<V: WireVisitor>(_ visitor: inout V) throws(V.Failure) {
        try visitor.string(&transfer, "transfer")
        try visitor.u64(&offset, "offset")
        try visitor.u32(&maxBytes, "maxBytes")
    }
}

extension Message.Chunk: WireItem {
    package init() { self.init(transfer: "", offset: 0, bytes: []) }

    package mutating func visit<V: WireVisitor>(_ visitor: inout V) throws(V.Failure) {
        try visitor.string(&transfer, "transfer")
        try visitor.u64(&offset, "offset")
        try visitor.bytes(&bytes, "bytes")
    }
}
