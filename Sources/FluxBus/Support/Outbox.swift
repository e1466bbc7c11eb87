import FluxBusProtocol

/// An engine's messages, held until its shell takes its effects, then sent together: a destination's one message as
/// it is, several as BUNDLEs, and alike ones of consecutive sequences as runs. A batch's thousand ACTIONs, or a
/// worker's thousand ACKs, then cost a few sends and wake-ups instead of a thousand, and a few encodings, and nothing
/// else changes: a BUNDLE and a run are handled in order, as their messages would have been.
struct Outbox<Destination: Hashable> {
    /// At most this many messages, or about this many bytes, in one BUNDLE.
    static var bundleCount: Int { 1_024 }
    static var bundleBytes: Int { 256 << 10 }

    /// Each destination in the order first held, with what it holds: its one message so far, as it is (most have one
    /// per burst: a lock-step dispatch's ACTION, COMPLETED, RESULT), or, once it has more, its messages with alike
    /// ones of consecutive sequences already joined into runs (ACTIONS, ACKS, COMPLETIONS), each within a BUNDLE's
    /// limits: the receiver takes them apart into the same messages, in the same order.
    private struct Slot {
        let destination: Destination
        var single: Message?
        var joiner: MessageRuns.Joiner?
    }
    private var slots: [Slot] = []
    /// The position of each destination, kept only once there are more than ``scannedAtMost``: a burst usually has
    /// one to three, found by comparing them, where each hash of a routing id cost more than the scan.
    private var positions: [Destination: Int] = [:]
    private static var scannedAtMost: Int { 8 }
    /// Where the last message went: the next one most often goes there too.
    private var lastPosition = 0
    private(set) var count = 0

    /// Keeps `message` for `destination` until ``release(codec:)``.
    mutating func hold(_ message: consuming Message, for destination: Destination) {
        count += 1
        guard let position = position(of: destination) else {
            lastPosition = slots.count
            slots.append(Slot(destination: destination, single: message))
            if slots.count > Self.scannedAtMost {
                if positions.isEmpty {
                    for (position, slot) in slots.enumerated() { positions[slot.destination] = position }
                } else {
                    positions[destination] = lastPosition
                }
            }
            return
        }
        lastPosition = position
        // The destination's runs grow in place: this runs for every message an engine sends.
        if slots[position].joiner != nil { return slots[position].joiner!.add(message) }
        var joiner = MessageRuns.Joiner(maxItems: Self.bundleCount, maxBytes: Self.bundleBytes)
        joiner.add(slots[position].single.take()!)
        joiner.add(message)
        slots[position].joiner = joiner
    }

    private func position(of destination: Destination) -> Int? {
        if lastPosition < slots.count, slots[lastPosition].destination == destination { return lastPosition }
        return slots.count > Self.scannedAtMost ? positions[destination] : slots.firstIndex { $0.destination == destination }
    }

    /// Returns what to send, each made into an engine's effect by `effect`, and starts empty again: per destination,
    /// in the order first held, single messages or BUNDLEs of them, each destination's messages in their order.
    ///
    /// A single message is moved out, not copied: a copy of a message retains and releases each of its fields, and
    /// every dispatch passes its ACTION, ACKs and RESULT through here.
    mutating func release<Effect>(codec: Codec, as effect: (Destination, consuming Message) -> Effect) -> [Effect] {
        defer {
            slots.removeAll(keepingCapacity: true)
            if !positions.isEmpty { positions.removeAll(keepingCapacity: true) }
            lastPosition = 0
            count = 0
        }
        // Sized up front: grown one append at a time, these arrays copied every message and body held so far.
        var out: [Effect] = []
        out.reserveCapacity(slots.count)
        for position in slots.indices {
            let destination = slots[position].destination
            // Moved out, not copied: a copy of a message retains each of its fields.
            guard var joiner = slots[position].joiner.take() else {
                out.append(effect(destination, slots[position].single.take()!))
                continue
            }
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
