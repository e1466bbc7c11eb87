import FluxBusProtocol

/// The STATEs a worker is sending (docs/PROTOCOL.md, "Transfers"): states being encoded off the I/O thread, and the
/// encoded bytes of states larger than one chunk, held while the coordinator PULLs the rest.
///
/// Bounded twice: a transfer untouched for ``idleLimit`` is dropped, and past ``maxHeld`` transfers the one touched
/// longest ago is dropped to make room. A PULL for a dropped transfer is answered ERROR `transfer gone`.
struct StateTransfers {
    /// The most encoded states held at once.
    static let maxHeld = 4
    /// A held state nobody PULLed for this long is dropped.
    static let idleLimit: Duration = .seconds(30)

    /// What a STATE will announce, fixed when the state was copied.
    struct Announcement {
        let store: String
        let sequence: UInt64
        let digest: UInt64
    }

    private struct Held {
        let bytes: [UInt8]
        var lastTouched: MonotonicTime
    }

    private var encoding: [String: Announcement] = [:]
    private var held: [String: Held] = [:]

    /// How many encoded states are held, for tests.
    var heldCount: Int { held.count }

    /// A state was copied for `requestID` and is being encoded.
    mutating func beginEncoding(_ requestID: String, _ announcement: Announcement) { encoding[requestID] = announcement }

    /// The encoding for `requestID` finished: what its STATE announces, if it was awaited.
    mutating func finishEncoding(_ requestID: String) -> Announcement? { encoding.removeValue(forKey: requestID) }

    /// Holds encoded bytes for their PULLs; returns the transfers dropped to stay within ``maxHeld``.
    mutating func hold(_ requestID: String, _ bytes: [UInt8], at now: MonotonicTime) -> [String] {
        held[requestID] = Held(bytes: bytes, lastTouched: now)
        var dropped: [String] = []
        while held.count > Self.maxHeld, let oldest = held.min(by: { $0.value.lastTouched < $1.value.lastTouched })?.key {
            held[oldest] = nil
            dropped.append(oldest)
        }
        return dropped
    }

    /// What a PULL gets: the bytes it asked for, or nil when the transfer is not held. The last chunk releases it.
    mutating func serve(_ pull: Message.Pull, at now: MonotonicTime) -> ArraySlice<UInt8>? {
        guard var entry = held[pull.transfer] else { return nil }
        let start = Int(clamping: min(pull.offset, UInt64(entry.bytes.count)))
        let end = start + min(Int(pull.maxBytes), entry.bytes.count - start)
        if end >= entry.bytes.count {
            held[pull.transfer] = nil
        } else {
            entry.lastTouched = now
            held[pull.transfer] = entry
        }
        return entry.bytes[start..<end]
    }

    /// Drops the held states untouched for ``idleLimit``; returns their ids.
    mutating func expire(at now: MonotonicTime) -> [String] {
        let idle = held.filter { now - $0.value.lastTouched >= Self.idleLimit }.keys
        for id in idle { held[id] = nil }
        return Array(idle)
    }
}
