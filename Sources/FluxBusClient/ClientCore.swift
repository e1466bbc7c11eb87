import FluxBusProtocol
import ZeroMQ

/// The client's socket side, on its I/O thread: sends requests and matches answers to them by request id.
final class ClientCore {
    private struct Pending {
        let continuation: CheckedContinuation<Message, any Error>
        let timer: IOLoopTimer
    }

    private let dealer: ZMQSocket
    private let scope: IOLoopScope
    private let endpoint: String
    private let codec = Codec()
    private var pending: [String: Pending] = [:]
    /// Why the coordinator refused this client's handshake, once it has.
    private var refusal: String?
    /// The key under which the one outstanding history request (FETCH, answered by REPLAY) waits.
    static let historyKey = "fetch"

    init(dealer: ZMQSocket, scope: IOLoopScope, endpoint: String) {
        self.dealer = dealer
        self.scope = scope
        self.endpoint = endpoint
    }

    deinit {
        for (_, request) in pending {
            request.continuation.resume(throwing: BusError(code: .unreachable, message: "the client closed before an answer came"))
        }
    }

    func send(_ message: Message, id: String, timeout: Duration, continuation: CheckedContinuation<Message, any Error>) {
        if let refusal {
            return continuation.resume(throwing: BusError(code: .refused, message: refusal))
        }
        // One answer comes per connection and request id: a second wait under the same id would never end.
        guard pending[id] == nil else {
            return continuation.resume(throwing: BusError(code: .usage, message:
                "request id `\(id)` is already waiting for an answer on this client; await that request (its answer is "
                + "this one's too), or use another id"))
        }
        let timer = scope.schedule(after: timeout) { [unowned self] in
            guard let request = pending.removeValue(forKey: id) else { return }
            request.continuation.resume(throwing: BusError(
                code: .unreachable,
                message: "no answer from the coordinator at \(endpoint) within \(timeout); is it running "
                    + "(`fluxbus coordinator`), and is this the right endpoint (--coordinator or FLUXBUS_COORDINATOR)?"))
        }
        pending[id] = Pending(continuation: continuation, timer: timer)
        do {
            _ = try dealer.send(codec.encode(message), nonBlocking: true)
        } catch {
            timer.cancel()
            pending[id] = nil
            continuation.resume(throwing: BusError(code: .unreachable, message: "cannot send to \(endpoint): \(error)"))
        }
    }

    /// The handshake failed: every request waiting, and every later one, fails with the reason.
    func refuseAll(_ reason: String) {
        refusal = reason
        for (_, request) in pending {
            request.timer.cancel()
            request.continuation.resume(throwing: BusError(code: .refused, message: reason))
        }
        pending.removeAll()
    }

    func drain() throws {
        while let frames = try dealer.tryReceive() {
            // Answers to requests sent together may come together, as a BUNDLE.
            for message in (try? codec.decodeAll(frames)) ?? [] { answer(message) }
        }
    }

    private func answer(_ message: Message) {
        guard let id = Self.requestID(of: message), let request = pending.removeValue(forKey: id) else { return }
        request.timer.cancel()
        if case .error(let error) = message {
            // A timeout or a coordinator that stopped (code 7) leaves the outcome unknown, like no answer: exit 3.
            let code: BusError.Code = error.code == .timeout || error.code == .internal ? .unreachable : .refused
            request.continuation.resume(throwing: BusError(code: code, message: error.message, remoteCode: error.code))
        } else if case .reject(let reject) = message {
            request.continuation.resume(throwing: BusError(code: .refused, message: reject.reason))
        } else {
            request.continuation.resume(returning: message)
        }
    }

    private static func requestID(of message: Message) -> String? {
        switch message {
        case .result(let result): result.requestID
        case .batchResult(let result): result.requestID
        // An ERROR answering a FETCH has no request id to carry.
        case .error(let error): error.requestID.isEmpty ? historyKey : error.requestID
        case .status(let status): status.requestID
        case .graph(let graph): graph.requestID
        case .state(let state): state.requestID
        case .chunk(let chunk): chunk.transfer
        case .replay: historyKey
        default: nil
        }
    }
}
