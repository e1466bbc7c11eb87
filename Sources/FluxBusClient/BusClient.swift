import Flux
import Foundation
import FluxBusProtocol
import Synchronization
import ZeroMQ

/// Talks to a coordinator: dispatches actions and reads status, the graph and stores' states.
///
/// Requests are matched to answers by request id, so several may be outstanding at once from many tasks.
///
/// ```swift
/// let client = try await BusClient(endpoint: "tcp://127.0.0.1:7401")
/// let result = try await client.dispatch("counter.add", json: #"{"by":1}"#)
/// print(result.sequence, result.succeeded)
/// await client.close()
/// ```
public final class BusClient: Sendable {
    /// The coordinator's control endpoint.
    public let endpoint: String
    /// How long a request waits for its answer by default.
    public let timeout: Duration
    let loop: IOLoop
    private let channel: ClientChannel
    private let ownedContext: ZMQContext?
    let security: PeerSecurity?
    /// History requests take turns (see ``HistoryGate``).
    let historyGate = HistoryGate()
    /// Publications dropped because they did not decode (``undecodablePublications``).
    let undecodable = PublicationDrops()
    private static let codec = Codec()

    /// Connects to a coordinator. Connecting does not wait for it: a request to a coordinator that is not there
    /// fails after its timeout with ``BusError`` `unreachable`.
    /// - Parameters:
    ///   - endpoint: the control endpoint; by default `FLUXBUS_COORDINATOR` or `tcp://127.0.0.1:7401`.
    ///   - context: a ZeroMQ context to share, as `inproc://` endpoints need.
    ///   - timeout: how long requests wait for an answer by default.
    ///   - security: CURVE with the coordinator; nil for plain text.
    public convenience init(
        endpoint: String? = nil, context: ZMQContext? = nil, timeout: Duration = .seconds(10), security: PeerSecurity? = nil
    ) async throws {
        try await self.init(endpoint: endpoint, context: context, timeout: timeout, security: security,
                            directWaitLimit: ClientChannel.directWaitLimit)
    }

    /// As the public initializer, with how long a caller may wait on the socket itself (see ``ClientChannel``):
    /// tests pick zero (the loop always receives) or long (the caller always does).
    package init(
        endpoint: String?, context: ZMQContext?, timeout: Duration, security: PeerSecurity?, directWaitLimit: Duration
    ) async throws {
        let endpoint = endpoint ?? ProcessInfo.processInfo.environment[BusDefaults.coordinatorEnvironmentVariable] ?? BusDefaults.controlEndpoint
        self.endpoint = endpoint
        self.timeout = timeout
        self.security = security
        ownedContext = context == nil ? try ZMQContext() : nil
        loop = try IOLoop(context: context ?? ownedContext!, name: "fluxbus-client")
        do {
            channel = try await loop.run { scope in
                // Not the scope's: callers use it too, so the channel closes it, under its lock, when the loop stops.
                nonisolated(unsafe) let dealer = try ZMQSocket(.dealer, context: scope.context)
                try security?.apply(to: dealer)
                let refusals = Refusals()
                // Safe to share with the channel: the monitor keeps only a weak reference to the dealer, and uses it
                // (to stop monitoring) only once the channel has closed it, on this thread.
                try HandshakeWatch.watch(
                    dealer, in: scope, endpoint: endpoint, usesCurve: security != nil,
                    onConnection: { refusals.channel?.connectionChanged(up: $0) }
                ) { [unowned scope] in
                    refusals.channel?.refuse($0, scope)
                }
                try dealer.connect(endpoint)
                let channel = try ClientChannel(dealer: dealer, endpoint: endpoint, loop: scope.loop, directWaitLimit: directWaitLimit)
                refusals.channel = channel
                scope.atStop { channel.stop() }
                return channel
            }
        } catch {
            await loop.shutdown()
            ownedContext?.shutdown()
            throw BusError(code: .usage, message: "cannot connect to \(endpoint): \(error)")
        }
    }

    /// Closes the connection. Requests still waiting fail.
    public func close() async {
        await channel.close()
        ownedContext?.shutdown()
    }

    func request(_ message: Message, id: String, timeout: Duration?) async throws -> Message {
        // An empty id is no id: retries under it could not be told apart, so each would be applied again.
        guard !id.isEmpty else {
            throw BusError(code: .usage, message: "the request id is empty; give a non-empty id (a retry must repeat it), or "
                + "none, for a new one per request")
        }
        // Over the protocol's limits, the coordinator could not answer: say so now instead of timing out.
        try RequestLimits.check(message)
        return try await channel.request(Self.codec.encode(message), id: id, timeout: timeout ?? self.timeout)
    }
}

/// Where a handshake failure finds the channel, which is made after the watch starts.
private final class Refusals {
    var channel: ClientChannel?
}
