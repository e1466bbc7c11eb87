// BUNDLE: several messages in one ZeroMQ message, so that a burst (a batch's ACTIONs, their ACKs, their COMPLETEDs)
// costs one send, one wake-up and one receive instead of one each. It changes nothing else: the receiver handles the
// messages in order, as if each had arrived alone from the same peer on the same socket.

extension Message {
    /// BUNDLE (0x1C), any peer → another, on any socket a message may travel: the bodies of other messages, in order.
    public struct Bundle: Sendable, Hashable {
        /// Each message's body frame: its command byte, then its fields. Never another BUNDLE, never empty.
        public var messages: [BundledMessage]

        /// A BUNDLE of already encoded bodies; ``Codec/bundle(_:)`` makes one from messages.
        public init(messages: [BundledMessage]) {
            self.messages = messages
        }
    }
}

/// One message inside a BUNDLE: its body frame.
public struct BundledMessage: Sendable, Hashable {
    /// The message's command byte, then its fields, exactly as frame 1 of the message sent alone.
    public var body: [UInt8]

    /// A bundled message with the given body.
    public init(body: [UInt8]) {
        self.body = body
    }
}

extension Message.Bundle: WireItem {
    package init() { self.init(messages: []) }

    package mutating func visit<V: WireVisitor>(_ visitor: inout V) throws(V.Failure) {
        try visitor.list(&messages, "messages")
    }
}

extension BundledMessage: WireItem {
    package init() { self.init(body: []) }

    package mutating func visit<V: WireVisitor>(_ visitor: inout V) throws(V.Failure) {
        try visitor.bytes(&body, "body")
    }
}

extension Codec {
    /// One BUNDLE holding `messages`, in order.
    public func bundle(_ messages: [Message]) -> Message {
        .bundle(.init(messages: messages.map { BundledMessage(body: encodeBody($0)) }))
    }

    /// The messages in `frames`, in order: the one message, or every message of a BUNDLE, each run (ACTIONS, ACKS,
    /// COMPLETIONS) as the messages it stands for.
    /// - Throws: ``DecodeError`` when the message, or any message in the bundle, is malformed; a BUNDLE that is empty or
    ///   holds another BUNDLE is `badBundle`, a run whose counts disagree `badRun`. Nothing of a malformed bundle is
    ///   handled.
    public func decodeAll(_ frames: [[UInt8]]) throws(DecodeError) -> [Message] {
        try decodeAll(frames, keepingAcks: false)
    }

    /// ``decodeAll(_:)``, but with `keepingAcks` an ACKS, checked the same way, is handed on whole: a coordinator walks
    /// it with ``Message/Acks/forEachAck(_:)`` instead of holding a message per ACK.
    package func decodeAll(_ frames: [[UInt8]], keepingAcks: Bool) throws(DecodeError) -> [Message] {
        let message = try decode(frames)
        var messages: [Message] = []
        guard case .bundle(let bundle) = message else {
            if try message.appendExpanded(to: &messages, keepingAcks: keepingAcks) { return messages }
            return [message]
        }
        guard !bundle.messages.isEmpty else { throw DecodeError(code: .badBundle, command: .bundle, value: 0) }
        messages.reserveCapacity(bundle.messages.count)
        for (index, item) in bundle.messages.enumerated() {
            let inner: Message
            do throws(DecodeError) {
                // The body alone: the BUNDLE's frame 0 was checked, and a frame array per message costs an allocation.
                inner = try item.body.withUnsafeBufferPointer { (body) throws(DecodeError) -> Message in try decodeBody(body) }
                if case .bundle = inner { throw DecodeError(code: .badBundle, command: .bundle, value: 1) }
                if try inner.appendExpanded(to: &messages, keepingAcks: keepingAcks) { continue }
            } catch where error.code == .badBundle {
                throw error
            } catch {
                throw error.nested(in: "messages", index: index).in(.bundle)
            }
            messages.append(inner)
        }
        return messages
    }
}
