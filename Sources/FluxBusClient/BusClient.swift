import Flux
import Foundation
import FluxBusProtocol
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
    private let core: IOLoopBound<ClientCore>
    private let ownedContext: ZMQContext?
    let security: PeerSecurity?
    /// History requests take turns (see ``HistoryGate``).
    let historyGate = HistoryGate()

    /// Connects to a coordinator. Connecting does not wait for it: a request to a coordinator that is not there
    /// fails after its timeout with ``BusError`` `unreachable`.
    /// - Parameters:
    ///   - endpoint: the control endpoint; by default `FLUXBUS_COORDINATOR` or `tcp://127.0.0.1:7401`.
    ///   - context: a ZeroMQ context to share, as `inproc://` endpoints need.
    ///   - timeout: how long requests wait for an answer by default.
    ///   - security: CURVE with the coordinator; nil for plain text.
    public init(
        endpoint: String? = nil, context: ZMQContext? = nil, timeout: Duration = .seconds(10), security: PeerSecurity? = nil
    ) async throws {
        let endpoint = endpoint ?? ProcessInfo.processInfo.environment[BusDefaults.coordinatorEnvironmentVariable] ?? BusDefaults.controlEndpoint
        self.endpoint = endpoint
        self.timeout = timeout
        self.security = security
        ownedContext = context == nil ? try ZMQContext() : nil
        loop = try IOLoop(context: context ?? ownedContext!, name: "fluxbus-client")
        do {
            core = try await loop.run { scope in
                let dealer = try scope.socket(.dealer)
                try security?.apply(to: dealer)
                let core = ClientCore(dealer: dealer, scope: scope, endpoint: endpoint)
                try HandshakeWatch.watch(dealer, in: scope, endpoint: endpoint) { core.refuseAll($0) }
                try dealer.connect(endpoint)
                scope.add(dealer) { _ in try core.drain() }
                return IOLoopBound(core, scope: scope)
            }
        } catch {
            await loop.shutdown()
            ownedContext?.shutdown()
            throw BusError(code: .usage, message: "cannot connect to \(endpoint): \(error)")
        }
    }

    /// Closes the connection. Requests still waiting fail.
    public func close() async {
        await loop.shutdown()
        ownedContext?.shutdown()
    }

    func request(_ message: Message, id: String, timeout: Duration?) async throws -> Message {
        // Over the protocol's limits, the coordinator could not answer: say so now instead of timing out.
        try RequestLimits.check(message)
        let timeout = timeout ?? self.timeout
        let core = self.core
        return try await withCheckedThrowingContinuation { continuation in
            let accepted = loop.execute { _ in core.value.send(message, id: id, timeout: timeout, continuation: continuation) }
            if !accepted {
                continuation.resume(throwing: BusError(code: .unreachable, message: "the client is closed"))
            }
        }
    }
}
