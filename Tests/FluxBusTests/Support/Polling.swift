import Flux
import Foundation
import FluxBusProtocol

@testable import FluxBus

/// Thrown when a bounded poll runs out of attempts; the message says what was awaited and what was seen last.
struct PollTimeout: Error, CustomStringConvertible {
    let description: String
}

extension BusClient {
    /// Asks for the status until `condition` holds, up to about five seconds; returns the status that satisfied it.
    /// - Throws: ``PollTimeout`` naming `what` and the last status seen.
    func status(until what: String, _ condition: (Message.Status) -> Bool) async throws -> Message.Status {
        var last: Message.Status?
        for _ in 0..<500 {
            let status = try await self.status()
            if condition(status) { return status }
            last = status
            try await Task.sleep(for: .milliseconds(10))
        }
        throw PollTimeout(description: "timed out waiting until \(what); last status: \(String(describing: last))")
    }
}

/// Checks `condition` until it holds, up to about five seconds.
/// - Throws: ``PollTimeout`` naming `what`.
func eventually(_ what: String, _ condition: () -> Bool) async throws {
    for _ in 0..<2_500 {
        if condition() { return }
        try await Task.sleep(for: .milliseconds(2))
    }
    throw PollTimeout(description: "timed out waiting until \(what)")
}

extension Message.Status {
    func worker(_ id: String) -> WorkerStatus? { workers.first { $0.id == id } }
    func store(_ name: String) -> StoreStatus? { stores.first { $0.name == name } }
    var liveWorkers: Int { workers.filter { $0.state == .live }.count }
}

extension Message.Graph {
    func node(_ name: String) -> GraphNode? { stores.first { $0.name == name } }
}

extension DispatchResult {
    func store(_ name: String) -> StoreSummary? { stores.first { $0.name == name } }
    func outcomes(of store: String) -> [Outcome] { outcomes.filter { $0.store == store } }
}

/// A state as the bus carries it: JSON with sorted keys and unescaped slashes, the project's canonical form.
func canonicalJSON<T: Encodable>(_ value: T) throws -> String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    return String(decoding: try encoder.encode(value), as: UTF8.self)
}

/// The text of a replica's state.
func text(_ state: Message.State) -> String { String(decoding: state.state, as: UTF8.self) }

/// A state decoded from a replica's JSON.
func decode<T: Decodable>(_ type: T.Type, _ state: Message.State) throws -> T {
    try JSONDecoder().decode(T.self, from: Data(state.state))
}

/// Every event a worker reported, once its `run()` has ended (the stream finishes with it).
func collect(_ events: AsyncStream<WorkerEvent>) async -> [WorkerEvent] {
    var seen: [WorkerEvent] = []
    for await event in events { seen.append(event) }
    return seen
}

/// The sequences a worker reported applying to `store` (with `status`, when given), in the order it reported them,
/// once its `run()` has ended.
func appliedSequences(_ events: AsyncStream<WorkerEvent>, store: String, status: OutcomeStatus? = nil) async -> [UInt64] {
    await collect(events).compactMap { event -> UInt64? in
        guard case .applied(let sequence, store, let applied) = event, status.map({ $0 == applied }) ?? true else { return nil }
        return sequence
    }
}
