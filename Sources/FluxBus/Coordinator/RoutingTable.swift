/// Worker ids by the routing id of the DEALER each joined from: looked up for every message a worker sends.
///
/// Its keys hash their bytes in one call. `[UInt8]`'s own `Hashable` feeds the hasher one call per byte, and a
/// coordinator looks a routing id up twice per acknowledgement.
struct RoutingTable {
    private struct Key: Hashable {
        let bytes: [UInt8]

        func hash(into hasher: inout Hasher) {
            bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
        }
    }

    private var workers: [Key: String] = [:]
    /// The last routing id looked up and what it named: a batch's ACKs come from one worker, hundreds per message,
    /// and comparing its few bytes costs less than hashing them again.
    private var last: (routingID: [UInt8], worker: String?)?

    subscript(routingID: [UInt8]) -> String? {
        mutating get {
            if let last, last.routingID == routingID { return last.worker }
            let worker = workers[Key(bytes: routingID)]
            last = (routingID, worker)
            return worker
        }
        set {
            workers[Key(bytes: routingID)] = newValue
            last = nil
        }
    }
}
