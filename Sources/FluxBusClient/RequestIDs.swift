import Foundation
import Synchronization

/// Request ids for requests whose caller gives none.
///
/// A fresh `UUID()` per request asked the kernel for randomness every time (on Linux an open, a read and a close of
/// `/dev/urandom`), on the path of every lock-step dispatch. Instead one UUID is drawn per process, and each request
/// adds a counter to it: as unique across processes as the UUID, and across requests of one process by the counter.
/// A caller that retries must still pass its own id: a default id is new on every call. (A process that forks without
/// exec hands its UUID and count to the child, which could then repeat the parent's ids; give such requests ids of
/// your own.)
public enum RequestIDs {
    private static let process = UUID().uuidString
    private static let counter = Atomic<UInt64>(0)

    /// A request id no other request has had: this process's UUID, a dash, and the request's number in it.
    public static func next() -> String {
        let number = counter.wrappingAdd(1, ordering: .relaxed).newValue
        return process + "-" + String(number)
    }
}
