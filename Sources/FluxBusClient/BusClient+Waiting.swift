import FluxBusProtocol

extension BusClient {
    /// Waits until the coordinator counts every one of `workers` live: joined, caught up, and part of every dispatch
    /// from now on. A dispatch involves only the replicas live when it starts, so wait before the first one.
    ///
    /// ```swift
    /// let client = try await BusClient(endpoint: "tcp://127.0.0.1:7401")
    /// try await client.waitUntilLive(["shop-1"])
    /// ```
    /// - Parameters:
    ///   - workers: worker ids, as given to `--id`.
    ///   - limit: how long to wait in all.
    /// - Throws: ``BusError`` `unreachable` naming each worker that is not live and its state when `limit` passes, or
    ///   as ``status(timeout:)`` throws.
    public func waitUntilLive(_ workers: [String], within limit: Duration = .seconds(10)) async throws {
        try await poll(within: limit) { LiveWait.missingWorkers(workers, in: $0) }
    }

    /// Waits until each of `stores` has a live replica and waits for no store that is missing: a dispatch to it
    /// will then be applied. Use it when a client knows the stores it needs but not the workers that host them.
    /// - Throws: ``BusError`` `unreachable` naming each store that is not ready and why, when `limit` passes.
    public func waitUntilLive(stores: [String], within limit: Duration = .seconds(10)) async throws {
        try await poll(within: limit) { LiveWait.missingStores(stores, in: $0) }
    }

    /// Asks for status until `missing` finds nothing missing, or throws what it last found once `limit` passes.
    private func poll(within limit: Duration, missing: (Message.Status) -> [String]) async throws {
        let deadline = ContinuousClock.now.advanced(by: limit)
        var lacking: [String] = []
        repeat {
            lacking = missing(try await status())
            if lacking.isEmpty { return }
            try await Task.sleep(for: .milliseconds(20))
        } while ContinuousClock.now < deadline
        throw BusError(code: .unreachable, message: "not live within \(limit): \(lacking.joined(separator: ", "))")
    }
}

/// What a status answer lacks for ``BusClient/waitUntilLive(_:within:)``: pure, so tests can check it.
package enum LiveWait {
    /// Each worker of `ids` that is not live, with its state (`absent` when the coordinator does not know it).
    package static func missingWorkers(_ ids: [String], in status: Message.Status) -> [String] {
        ids.compactMap { id in
            let state = status.workers.first { $0.id == id }?.state
            return state == .live ? nil : "worker `\(id)` (\(state.map(String.init(describing:)) ?? "absent"))"
        }
    }

    /// Each store of `names` with no live replica, or waiting for a store nobody hosts.
    package static func missingStores(_ names: [String], in status: Message.Status) -> [String] {
        names.compactMap { name in
            let hosts = status.workers.filter { $0.state == .live && $0.stores.contains(name) }
            if hosts.isEmpty { return "store `\(name)` (no live replica)" }
            guard let waiting = status.stores.first(where: { $0.name == name })?.waitingFor, !waiting.isEmpty else { return nil }
            return "store `\(name)` (waiting for \(waiting.joined(separator: ", ")))"
        }
    }
}
