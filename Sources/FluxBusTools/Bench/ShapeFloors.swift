import FluxBus
import Foundation
import ZeroMQ

/// Floors in the shape of two scenarios, measured in the same run as the bus: what `flight` and `status-rtt` would
/// cost with no bus at all, only the same messages between the same number of processes over raw ZeroMQ (and, for
/// `flight`, the log's syncs that a `--sync always` coordinator must wait for). The baseline's four hops are the
/// issue's yardstick; these say how far below a scenario's target the physics of this machine already lies.
///
/// - `flight-floor`: a relay with a ROUTER and a PUB (the coordinator) and three stage processes, each with a SUB
///   and a DEALER (the workers). The client's message is published to all three stages; the first answers; the
///   relay then hands it to the second over its ROUTER, and the second's answer to the third; the third's answer
///   goes back to the client. Eight messages on the path, as a `flight` dispatch has (DISPATCH, ACTION, three ACKs,
///   two RELEASEs, RESULT), and two stages woken by a publication they do not answer. Between them the relay
///   rewrites and `fdatasync`s a page of a file, as the coordinator syncs its journal: once after publishing (the
///   action's record, synced while the ACTION travels) and once before each hand-over (a decision, which must be on
///   disk before a dependent reads it: docs/ARCHITECTURE.md, "Publishing while the log syncs").
/// - `flight-floor-unsynced`: the same without a file.
/// - `status-floor`: client → relay → client, the relay sending each message back to its sender: the two hops of a
///   STATUS request.
///
/// The peers are `fluxbus bench-peer flight-relay|stage|reflect`; the client is ``BaselineBench``'s, and
/// `fluxbus bench-peer client` runs it by hand.
public enum ShapeFloors {
    /// The routing id a stage connects with.
    static func stageID(_ stage: Int) -> [UInt8] { Array("stage-\(stage)".utf8) }
    /// What a stage says first, so that the relay's ROUTER knows its routing id; the relay answers nothing to it.
    static let hello = Array("hello".utf8)
    static let stages = 3

    /// The relay of `flight-floor`: binds a ROUTER at `control` and a PUB at `publish` and passes each client
    /// message along the stages (above). With a `syncPath`, syncs a page of that file where the coordinator syncs
    /// its log. Runs until the process is killed.
    public static func runFlightRelay(control: String, publish: String, syncPath: String?) throws {
        let context = try ZMQContext()
        let router = try ZMQSocket(.router, context: context)
        let publisher = try ZMQSocket(.pub, context: context)
        for socket in [router, publisher] { try socket.set(.linger, to: .zero) }
        try router.bind(control)
        try publisher.bind(publish)
        let pages = try syncPath.map(SyncedPages.init(path:))
        var client: [UInt8] = []
        let stageIDs = (1...stages).map(stageID)
        while true {
            let frames = try router.receive()
            guard frames.count == 2, frames[1] != hello else { continue }
            if let index = stageIDs.firstIndex(of: frames[0]) {
                if index + 1 < stages {
                    try pages?.sync()
                    _ = try router.send([stageIDs[index + 1], frames[1]])
                } else {
                    _ = try router.send([client, frames[1]])
                }
            } else {
                client = frames[0]
                _ = try publisher.send(frames[1])
                try pages?.sync()
            }
        }
    }

    /// A stage of `flight-floor`: subscribes to everything at `publish` and connects a DEALER to `control` as
    /// `stage-N`. Stage 1 answers each publication; every stage answers what the relay hands it over the DEALER.
    /// The others receive each publication and drop it. Runs until the process is killed.
    public static func runStage(_ stage: Int, control: String, publish: String) throws {
        let context = try ZMQContext()
        let subscriber = try ZMQSocket(.sub, context: context)
        let dealer = try ZMQSocket(.dealer, context: context)
        for socket in [subscriber, dealer] { try socket.set(.linger, to: .zero) }
        try subscriber.subscribe()
        try subscriber.connect(publish)
        try dealer.set(.routingID, to: stageID(stage))
        try dealer.connect(control)
        _ = try dealer.send(hello)
        var poller = ZMQPoller()
        let published = poller.add(subscriber)
        let handed = poller.add(dealer)
        while true {
            _ = try poller.poll(timeout: nil)
            if poller[published].contains(.readable) {
                while let frames = try subscriber.tryReceive() {
                    if stage == 1 { _ = try dealer.send(frames) }
                }
            }
            if poller[handed].contains(.readable) {
                while let frames = try dealer.tryReceive() { _ = try dealer.send(frames) }
            }
        }
    }

    /// The client of any of these floors, by hand: lock-step round trips through the relay at `endpoint`, with the
    /// count, warm-up and payload of `settings`, as `fluxbus bench` measures them (for scripts that read the peers'
    /// processes meanwhile).
    public static func runClient(endpoint: String, settings: BenchSettings) async throws -> LatencySummary {
        let count = settings.count(default: 10_000, quick: 200)
        let (recorder, _, _) = try await BaselineBench.measure(
            endpoint: endpoint, count: count, warmup: settings.warmup(for: count), payloadBytes: settings.payloadBytes,
            relayPID: nil, progress: nil)
        return recorder.summary
    }

    /// The relay of `status-floor`: binds a ROUTER at `endpoint` and sends every message back to its sender. Runs
    /// until the process is killed.
    public static func runReflector(endpoint: String) throws {
        let context = try ZMQContext()
        let router = try ZMQSocket(.router, context: context)
        try router.set(.linger, to: .zero)
        try router.bind(endpoint)
        while true { _ = try router.send(try router.receive()) }
    }
}

/// A small file of whole pages, written once, of which one page at a time is rewritten and `fdatasync`ed: what the
/// coordinator's journal (`log.journal`) does for each commit, so that a sync writes data and no metadata. As the
/// journal does, it drops the file's pages from the page cache once written, so that a page rewritten later is
/// cached alone and its sync writes that page, not a large folio around it.
final class SyncedPages {
    static let pageBytes = 4_096
    static let pageCount = 64
    private let path: String
    private let descriptor: Int32
    private let page = [UInt8](repeating: 1, count: SyncedPages.pageBytes)
    private var next = 0

    init(path: String) throws {
        self.path = path
        descriptor = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw Self.failure("cannot open", path) }
        for _ in 0..<Self.pageCount { try write() }
        guard fsync(descriptor) == 0 else { throw Self.failure("cannot sync", path) }
        _ = posix_fadvise(descriptor, 0, 0, Int32(POSIX_FADV_DONTNEED))
    }

    deinit { close(descriptor) }

    /// Rewrites the next page and waits for `fdatasync`.
    func sync() throws {
        try write()
        guard fdatasync(descriptor) == 0 else { throw Self.failure("cannot sync", path) }
    }

    private func write() throws {
        let offset = off_t(next % Self.pageCount * Self.pageBytes)
        next += 1
        let written = page.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, offset) }
        guard written == page.count else { throw Self.failure("cannot write", path) }
    }

    private static func failure(_ what: String, _ path: String) -> BusError {
        BusError(code: .storage, message: "\(what) \(path): \(String(cString: strerror(errno)))")
    }
}
