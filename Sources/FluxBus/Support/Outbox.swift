import FluxBusProtocol

/// An engine's messages, held until its shell takes its effects, then sent together: a destination's one message as
/// it is, several as BUNDLEs, and alike ones of consecutive sequences as runs. A batch's thousand ACTIONs, or a
/// worker's thousand ACKs, then cost a few sends and wake-ups instead of a thousand, and a few encodings, and nothing
/// else changes: a BUNDLE and a run are handled in order, as their messages would have been.
struct Outbox<Destination: Hashable> {
    /// At most this many messages, or about this many bytes, in one BUNDLE.
    static var bundleCount: Int { 1_024 }
    static var bundleBytes: Int { 256 << 10 }

    private var order: [Destination] = []
    /// The one message of a destination that has one so far: most have one per burst (a lock-step dispatch's ACTION,
    /// COMPLETED, RESULT), and keep it as it is.
    private var single: [Destination: Message] = [:]
    /// The messages of a destination that has more, alike ones of consecutive sequences already joined into runs
    /// (ACTIONS, ACKS, COMPLETIONS), each within a BUNDLE's limits: the receiver takes them apart into the same
    /// messages, in the same order.
    private var joined: [Destination: MessageRuns.Joiner] = [:]
    private(set) var count = 0

    /// Keeps `message` for `destination` until ``release(codec:)``.
    mutating func hold(_ message: consuming Message, for destination: Destination) {
        // One lookup in the usual case, and the destination's runs grow in place: this runs for every message an
        // engine sends.
        count += 1
        if let index = joined.index(forKey: destination) { return joined.values[index].add(message) }
        guard let first = single.removeValue(forKey: destination) else {
            single[destination] = message
            return order.append(destination)
        }
        var joiner = MessageRuns.Joiner(maxItems: Self.bundleCount, maxBytes: Self.bundleBytes)
        joiner.add(first)
        joiner.add(message)
        joined[destination] = joiner
    }

    /// Returns what to send, each made into an engine's effect by `effect`, and starts empty again: per destination,
    /// in the order first held, single messages or BUNDLEs of them, each destination's messages in their order.
    ///
    /// A single message is moved out, not copied: a copy of a message retains and releases each of its fields, and
    /// every dispatch passes its ACTION, ACKs and RESULT through here.
    mutating func release<Effect>(codec: Codec, as effect: (Destination, consuming Message) -> Effect) -> [Effect] {
        defer {
            order.removeAll(keepingCapacity: true)
            single.removeAll(keepingCapacity: true)
            joined.removeAll(keepingCapacity: true)
            count = 0
        }
        // Sized up front: grown one append at a time, these arrays copied every message and body held so far.
        var out: [Effect] = []
        out.reserveCapacity(order.count)
        for destination in order {
            if let message = single.removeValue(forKey: destination) {
                out.append(effect(destination, message))
                continue
            }
            var joiner = joined.removeValue(forKey: destination)!
            var messages = joiner.take()
            if messages.count == 1 {
                out.append(effect(destination, messages.removeLast()))
                continue
            }
            // Chunks of consecutive messages, cut by count and size; a chunk of one goes as the message itself. Only
            // the bodies are kept: the chunk's first message is found again by its position.
            var chunk: [BundledMessage] = []
            var chunkStart = 0
            var bytes = 0
            func close(before end: Int) {
                if chunk.count == 1 {
                    out.append(effect(destination, messages[chunkStart]))
                    chunk.removeAll(keepingCapacity: true)
                } else {
                    out.append(effect(destination, .bundle(.init(messages: chunk))))
                    chunk = []
                }
                chunkStart = end
                bytes = 0
            }
            for index in messages.indices {
                let body = codec.encodeBody(messages[index])
                if !chunk.isEmpty, chunk.count == Self.bundleCount || bytes + body.count > Self.bundleBytes { close(before: index) }
                if chunk.isEmpty { chunk.reserveCapacity(min(messages.count - index, Self.bundleCount)) }
                chunk.append(BundledMessage(body: body))
                bytes += body.count
            }
            close(before: messages.count)
        }
        return out
    }
}
