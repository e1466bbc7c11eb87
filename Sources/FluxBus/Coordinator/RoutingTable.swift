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

    subscript(routingID: [UInt8]) -> String? {
        get { workers[Key(bytes: routingID)] }
        set { workers[Key(bytes: routingID)] = newValue }
    }
}
