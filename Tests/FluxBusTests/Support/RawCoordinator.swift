import Flux
import Foundation
import FluxBusProtocol
import ZeroMQ

@testable import FluxBus

/// A coordinator played by hand: a ROUTER and a PUB bound on `inproc://` in a context shared with the worker under
/// test, speaking raw FLXB messages. Tests drive it from one dedicated thread at a time (``onDedicatedThread``).
///
/// `@unchecked Sendable`: its sockets are only used by the one script running on a dedicated thread; the test hands
/// it over only after that thread has finished (the continuation's resume is the memory barrier ZeroMQ needs).
final class RawCoordinator: @unchecked Sendable {
    let context: ZMQContext
    let control: String
    let publish: String
    private let router: ZMQSocket
    private let publisher: ZMQSocket
    private let codec = Codec()

    init() throws {
        context = try ZMQContext()
        let name = UUID().uuidString
        control = "inproc://raw-control-\(name)"
        publish = "inproc://raw-publish-\(name)"
        router = try ZMQSocket(.router, context: context)
        publisher = try ZMQSocket(.pub, context: context)
        try router.set(.linger, to: .zero)
        try publisher.set(.linger, to: .zero)
        try router.bind(control)
        try publisher.bind(publish)
    }

    /// Messages of a BUNDLE not yet handed out.
    private var unbundled: [(from: [UInt8], message: Message)] = []
    /// Worker id → the routing id its messages came from (`w1/5eed…`: a worker's DEALER names its process).
    private var routingIDs: [[UInt8]: [UInt8]] = [:]

    /// The next message from a worker, with its routing id (a BUNDLE's one by one); nil after `timeout`.
    func receive(timeout: Duration) throws -> (from: [UInt8], message: Message)? {
        if !unbundled.isEmpty { return unbundled.removeFirst() }
        guard let frames = try router.receive(timeout: timeout), frames.count > 1 else { return nil }
        if let slash = frames[0].firstIndex(of: UInt8(ascii: "/")) { routingIDs[Array(frames[0][..<slash])] = frames[0] }
        unbundled = try codec.decodeAll(Array(frames.dropFirst())).map { (frames[0], $0) }
        return unbundled.removeFirst()
    }

    /// Sends to a routing id; a bare worker id reaches the process it last heard under that id.
    func send(_ message: Message, to routingID: [UInt8]) throws {
        _ = try router.send([routingIDs[routingID] ?? routingID] + codec.encode(message))
    }

    /// Sends frames as they are, decodable or not, to a routing id.
    func send(frames: [[UInt8]], to routingID: [UInt8]) throws {
        _ = try router.send([routingIDs[routingID] ?? routingID] + frames)
    }

    func publish(_ message: Message) throws {
        _ = try publisher.send(codec.encode(message))
    }

    /// Publishes frames as they are, decodable or not.
    func publish(frames: [[UInt8]]) throws {
        _ = try publisher.send(frames)
    }

    /// A WELCOME for this coordinator's publish endpoint, with short intervals.
    func welcome(epoch: UInt64, sequence: UInt64) -> Message {
        .welcome(.init(epoch: epoch, sequence: sequence, publishEndpoint: publish, heartbeatMillis: 50, deadlineMillis: 5_000))
    }

    /// Starts a worker in this coordinator's context.
    func startWorker(_ id: String, _ stores: [HostedStore]) -> (worker: Worker, task: Task<Void, any Error>) {
        let worker = Worker(
            configuration: .init(id: id, coordinator: control, stores: stores, heartbeatInterval: .milliseconds(50)),
            context: context, logger: TestBus.logger("worker.\(id)"))
        return (worker, Task { try await worker.run() })
    }

    func close() {
        router.close()
        publisher.close()
        context.shutdown()
    }
}
