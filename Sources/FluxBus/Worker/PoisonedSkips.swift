import FluxBusProtocol

/// The hosted stores a worker must not run at a sequence: the coordinator marked the action poisoned for them (a
/// handler crashed on it again and again). Kept from the REPLAY that carried the marks until the sequence is applied.
struct PoisonedSkips {
    private var stores: [UInt64: Set<String>] = [:]

    var isEmpty: Bool { stores.isEmpty }

    /// Keeps the marks for stores that run here; returns those new to it, to log.
    mutating func keep(_ marks: [PoisonMark], hosted: (String) -> Bool) -> [PoisonMark] {
        marks.filter { hosted($0.store) && stores[$0.sequence, default: []].insert($0.store).inserted }
    }

    func contains(_ store: String, at sequence: UInt64) -> Bool {
        stores[sequence]?.contains(store) ?? false
    }

    mutating func forget(through sequence: UInt64) {
        guard !stores.isEmpty else { return }
        stores = stores.filter { $0.key > sequence }
    }
}
