/// What a store read of its dependencies' outcomes in one dispatch, as one u64: a worker reports it with the store's
/// result (``StoreResult/readDigest``), and the coordinator holds it to the outcomes its log records before it
/// answers for the dispatch, so that an answer is never given for a replica that ran on another outcome
/// (docs/PROTOCOL.md, Appendix F).
///
/// Only what can change the store's state counts: whether it ran, and the outputs it was handed. A store skipped
/// because a dependency failed, was skipped or was lost reads ``skipped`` whichever it was.
///
/// ```swift
/// ReadDigest.of([StoreOutput(store: "ledger", status: .failed, message: "refused")])  // ReadDigest.skipped
/// ```
public enum ReadDigest {
    /// The store waited for no dependency, or the worker does not say what it read.
    public static let none: UInt64 = 0
    /// The store was skipped: a dependency did not succeed.
    public static let skipped: UInt64 = 1

    /// The digest of a run that read `outputs` (dependency name, published output), every dependency having
    /// succeeded: FNV-1a 64 over each dependency in name order, its UTF-8 name, a 0 byte, then 0 when it published
    /// nothing, or 1, the output's length as 4 bytes big-endian, and the output. Never ``none`` or ``skipped``.
    public static func ran(reading outputs: [(store: String, output: [UInt8]?)]) -> UInt64 {
        var hash = StateDigest.offsetBasis
        func mix(_ byte: UInt8) { hash = (hash ^ UInt64(byte)) &* StateDigest.prime }
        // Byte order, as the document says: `String`'s `<` orders by Unicode, which may differ for names that are not ASCII.
        for (store, output) in outputs.sorted(by: { $0.store.utf8.lexicographicallyPrecedes($1.store.utf8) }) {
            for byte in store.utf8 { mix(byte) }
            mix(0)
            guard let output else {
                mix(0)
                continue
            }
            mix(1)
            let count = UInt32(truncatingIfNeeded: output.count)
            for shift in stride(from: 24, through: 0, by: -8) { mix(UInt8(truncatingIfNeeded: count >> UInt32(shift))) }
            for byte in output { mix(byte) }
        }
        return hash > skipped ? hash : hash &+ 2
    }

    /// The digest of a store that waited for dependencies with these recorded outcomes: ``none`` for no dependency,
    /// ``skipped`` when one did not succeed, otherwise ``ran(reading:)`` over their outputs.
    public static func of(_ dependencies: [StoreOutput]) -> UInt64 {
        guard !dependencies.isEmpty else { return none }
        guard dependencies.allSatisfy({ $0.status == .ok }) else { return skipped }
        return ran(reading: dependencies.map { ($0.store, $0.output) })
    }
}
