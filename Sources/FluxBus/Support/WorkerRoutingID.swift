/// The routing id a worker's DEALER presents: its worker id, `/`, and its instance in hex (`w1/5eed000000000001`).
///
/// With the bare worker id, a second process started under a live worker's id shared its routing id, and the
/// ROUTER (ROUTER_HANDOVER) gave that id to the newcomer and cut the holder off: the holder's messages stopped
/// arriving and it was written off while it still ran. One routing id per process lets the coordinator hear both and
/// refuse the newcomer alone. The bare worker id stays valid, for workers that do not add a suffix.
enum WorkerRoutingID {
    /// The routing id of `instance` of worker `id`.
    static func make(_ id: String, instance: UInt64) -> [UInt8] {
        Array("\(id)/\(String(instance, radix: 16))".utf8)
    }

    /// Whether a connection's routing id may speak for worker `id`: the id itself, or the id, `/` and a suffix.
    static func belongs(_ routingID: [UInt8], to id: String) -> Bool {
        let idBytes = Array(id.utf8)
        guard routingID.starts(with: idBytes) else { return false }
        return routingID.count == idBytes.count || (routingID.count > idBytes.count + 1 && routingID[idBytes.count] == UInt8(ascii: "/"))
    }
}
