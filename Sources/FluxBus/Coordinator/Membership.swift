import Flux
import FluxBusProtocol

/// Who is on the bus: the workers, the stores they declared, and the global waitFor graph.
///
/// A store is *active* once every store it waits for is active; only active stores are in ``graph`` and take part in
/// dispatches. A store waiting for a name that no worker hosts yet stays declared but inactive, "waiting for" that
/// name, until a worker brings it. Cycles are refused at join time, across workers.
struct Membership {
    struct WorkerRecord {
        let id: String
        var routingID: [UInt8]
        var instance: UInt64
        var stores: [StoreDeclaration]
        var state: WorkerState
        var lastApplied: UInt64
        var lastHeard: MonotonicTime
        /// The digest each of its stores last reported, with the sequence it was for.
        var digests: [String: (sequence: UInt64, digest: UInt64)] = [:]

        func hosts(_ store: String) -> Bool { stores.contains { $0.name == store } }
    }

    struct StoreRecord {
        var declaration: StoreDeclaration
        /// Worker ids hosting a replica, in join order.
        var replicas: [String] = []
        /// The first sequence at which replicas reported different digests; 0 for none.
        var divergedAt: UInt64 = 0
        /// Known from the log of a previous run, and no worker hosting it has joined since: kept, though nobody hosts
        /// it, so that plans still name it (its outcome `unknown` until a replica returns and applies them).
        var fromLog = false

        func handles(_ actionType: String) -> Bool {
            declaration.handlesAll || declaration.handles.contains(actionType)
        }
    }

    struct Refusal: Error {
        let code: Message.Reject.Code
        let reason: String
    }

    private(set) var workers: [String: WorkerRecord] = [:]
    private(set) var workerOrder: [String] = []
    private(set) var stores: [String: StoreRecord] = [:]
    private(set) var storeOrder: [String] = []
    private(set) var graph = DependencyGraph()
    /// ``storesInOrder``'s names, worked out when a worker joins rather than per STATUS: only a join changes them.
    private var orderedStoreNames: [String] = []
    let topology: Topology?

    init(topology: Topology?) {
        self.topology = topology
    }

    // MARK: - Joining

    /// Checks a HELLO against the bus and, if it fits, records the worker as catching up.
    mutating func join(_ hello: Message.Hello, routingID: [UInt8], now: MonotonicTime) throws(Refusal) {
        try validate(hello)
        var candidateStores = stores
        var candidateOrder = storeOrder
        for declaration in hello.stores {
            if var existing = candidateStores[declaration.name] {
                // A store known only from the log takes the declaration its first replica brings: nobody hosts the
                // old one, and a worker may have been upgraded while the coordinator was down.
                if existing.fromLog, existing.replicas.isEmpty {
                    existing.declaration = declaration
                    existing.fromLog = false
                }
                guard existing.declaration.dependsOn == declaration.dependsOn,
                    existing.declaration.handlesAll == declaration.handlesAll,
                    Set(existing.declaration.handles) == Set(declaration.handles)
                else {
                    throw Refusal(
                        code: .invalidDeclaration,
                        reason: "store `\(declaration.name)` is already on the bus as "
                            + Self.describe(existing.declaration) + ", but worker `\(hello.workerID)` declares it as "
                            + Self.describe(declaration) + "; every replica must declare the same dependencies and actions")
                }
                existing.replicas.removeAll { $0 == hello.workerID }
                candidateStores[declaration.name] = existing
            } else {
                candidateStores[declaration.name] = StoreRecord(declaration: declaration)
                candidateOrder.append(declaration.name)
            }
        }
        // The worker's earlier declarations (a restart may bring other stores) no longer count.
        if let previous = workers[hello.workerID] {
            for store in previous.stores where !hello.stores.contains(where: { $0.name == store.name }) {
                candidateStores[store.name]?.replicas.removeAll { $0 == hello.workerID }
            }
        }
        for declaration in hello.stores { candidateStores[declaration.name]!.replicas.append(hello.workerID) }

        let nodes = candidateOrder.map { name in
            DependencyGraph.Node(name: name, dependsOn: candidateStores[name]!.declaration.dependsOn)
        }
        if let cycle = Self.findCycle(nodes) {
            throw Refusal(code: .cycle, reason: "worker `\(hello.workerID)` would close a \(cycle)")
        }
        stores = candidateStores
        storeOrder = candidateOrder
        if workers[hello.workerID] == nil { workerOrder.append(hello.workerID) }
        workers[hello.workerID] = WorkerRecord(
            id: hello.workerID, routingID: routingID, instance: hello.instance, stores: hello.stores,
            state: .catchingUp, lastApplied: hello.stores.map(\.lastApplied).min() ?? 0, lastHeard: now)
        pruneUnhostedStores()
        recomputeGraph()
    }

    private func validate(_ hello: Message.Hello) throws(Refusal) {
        guard BusName.isValid(hello.workerID) else {
            throw Refusal(
                code: .invalidDeclaration,
                reason: "worker id '\(hello.workerID)' must be 1 to 64 letters, digits, '.', '_' or '-'")
        }
        guard !hello.stores.isEmpty else {
            throw Refusal(code: .invalidDeclaration, reason: "worker `\(hello.workerID)` declares no stores")
        }
        var seen = Set<String>()
        for declaration in hello.stores {
            guard BusName.isValid(declaration.name) else {
                throw Refusal(code: .invalidDeclaration, reason: "store name '\(declaration.name)' is not valid")
            }
            guard seen.insert(declaration.name).inserted else {
                throw Refusal(
                    code: .invalidDeclaration,
                    reason: "worker `\(hello.workerID)` declares store `\(declaration.name)` twice")
            }
            guard !declaration.dependsOn.contains(declaration.name) else {
                throw Refusal(code: .cycle, reason: "store `\(declaration.name)` waits for itself")
            }
            if let topology {
                guard let pinned = topology.store(named: declaration.name) else {
                    throw Refusal(
                        code: .topologyConflict,
                        reason: "store `\(declaration.name)` is not in the coordinator's topology; "
                            + "add it there or remove it from worker `\(hello.workerID)`")
                }
                guard Set(pinned.dependsOn) == Set(declaration.dependsOn) else {
                    throw Refusal(
                        code: .topologyConflict,
                        reason: "store `\(declaration.name)` waits for [\(declaration.dependsOn.joined(separator: ", "))] "
                            + "but the topology pins [\(pinned.dependsOn.joined(separator: ", "))]")
                }
            }
        }
    }

    // MARK: - Worker states

    // The hot setters below find the record once and change it in place through `values`: `workers[id]?.field = x`
    // moves the whole record out of the dictionary and back, which cost more than the rest of an ACK's bookkeeping.
    mutating func heard(from workerID: String, at now: MonotonicTime) {
        guard let index = workers.index(forKey: workerID) else { return }
        workers.values[index].lastHeard = now
    }

    /// Counts every worker's silence from `now`: the coordinator itself was not running before it.
    mutating func forgiveSilence(until now: MonotonicTime) {
        for id in workers.keys { workers[id]!.lastHeard = max(workers[id]!.lastHeard, now) }
    }

    mutating func setState(_ state: WorkerState, of workerID: String) {
        guard let index = workers.index(forKey: workerID) else { return }
        workers.values[index].state = state
    }

    mutating func recordApplied(_ sequence: UInt64, by workerID: String) {
        guard let index = workers.index(forKey: workerID), sequence > workers.values[index].lastApplied else { return }
        workers.values[index].lastApplied = sequence
    }

    mutating func recordDigest(_ digest: UInt64, store: String, sequence: UInt64, worker workerID: String) {
        guard let index = workers.index(forKey: workerID) else { return }
        workers.values[index].digests[store] = (sequence, digest)
    }

    /// The replicas of `store` whose latest reported digest is for `sequence`.
    func replicasReporting(_ store: String, at sequence: UInt64) -> [(worker: String, digest: UInt64)] {
        (stores[store]?.replicas ?? []).compactMap { id in
            workers[id]?.digests[store].flatMap { $0.sequence == sequence ? (id, $0.digest) : nil }
        }
    }

    mutating func markDiverged(_ store: String, at sequence: UInt64) {
        if stores[store]?.divergedAt == 0 { stores[store]?.divergedAt = sequence }
    }

    /// The workers whose replicas count for a new dispatch.
    func liveReplicas(of store: String) -> [String] {
        (stores[store]?.replicas ?? []).filter { workers[$0]?.state == .live }
    }

    /// The workers that may run a store now: live or catching up.
    func connectedReplicas(of store: String) -> [String] {
        (stores[store]?.replicas ?? []).filter {
            let state = workers[$0]?.state
            return state == .live || state == .catchingUp
        }
    }

    /// Every declared store, dependencies first, whatever order the workers joined in; stores still waiting come
    /// after the declared stores they wait for.
    var storesInOrder: [StoreRecord] { orderedStoreNames.compactMap { stores[$0] } }

    /// The stores a declared store still waits for before it becomes active.
    func waitingFor(_ store: String) -> [String] {
        guard let declaration = stores[store]?.declaration else { return [] }
        return declaration.dependsOn.filter { !graph.contains($0) }
    }

    /// The names a store waits for, directly or through stores that wait themselves, that no worker declares: why
    /// an inactive store is not ready.
    func undeclaredDependencies(of store: String) -> [String] {
        var missing: [String] = []
        var seen: Set<String> = [store]
        var pending = [store]
        while let name = pending.popLast() {
            for dependency in stores[name]?.declaration.dependsOn ?? [] where seen.insert(dependency).inserted {
                if stores[dependency] == nil { missing.append(dependency) } else if !graph.contains(dependency) { pending.append(dependency) }
            }
        }
        return missing.sorted()
    }

    /// Adds the stores a previous run's log recorded that no worker has declared since, with their recorded
    /// declarations and no replica. One that would close a cycle with the stores already here, or that the
    /// topology does not pin, is left out; returns the names left out.
    mutating func remember(_ declarations: [StoreDeclaration]) -> [String] {
        var leftOut: [String] = []
        for declaration in declarations where stores[declaration.name] == nil {
            var candidate = declaration
            candidate.lastApplied = 0
            let nodes = (storeOrder + [candidate.name]).map { name in
                DependencyGraph.Node(name: name, dependsOn: stores[name]?.declaration.dependsOn ?? candidate.dependsOn)
            }
            let pinned = topology.map { $0.store(named: candidate.name).map { Set($0.dependsOn) == Set(candidate.dependsOn) } ?? false }
            guard pinned ?? true, Self.findCycle(nodes) == nil else {
                leftOut.append(candidate.name)
                continue
            }
            stores[candidate.name] = StoreRecord(declaration: candidate, fromLog: true)
            storeOrder.append(candidate.name)
        }
        recomputeGraph()
        return leftOut
    }

    // MARK: - The graph

    /// Stores nobody hosts any more are forgotten, unless another store's declaration still names them.
    private mutating func pruneUnhostedStores() {
        storeOrder.removeAll { name in
            guard let record = stores[name], record.replicas.isEmpty, !record.fromLog else { return false }
            stores[name] = nil
            return true
        }
    }

    /// Active stores: those whose dependencies are all active, found by repeated passes in declaration order; and
    /// every declared store's place in ``storesInOrder``.
    private mutating func recomputeGraph() {
        var active: [DependencyGraph.Node] = []
        var activeNames = Set<String>()
        var changed = true
        while changed {
            changed = false
            for name in storeOrder where !activeNames.contains(name) {
                let dependsOn = stores[name]!.declaration.dependsOn
                if dependsOn.allSatisfy(activeNames.contains) {
                    active.append(.init(name: name, dependsOn: dependsOn))
                    activeNames.insert(name)
                    changed = true
                }
            }
        }
        // The cycle check at join time makes this infallible.
        graph = (try? DependencyGraph(active)) ?? DependencyGraph()
        let declared = Set(storeOrder)
        let nodes = storeOrder.compactMap { stores[$0] }.map { store in
            DependencyGraph.Node(name: store.declaration.name, dependsOn: store.declaration.dependsOn.filter(declared.contains))
        }
        orderedStoreNames = (try? DependencyGraph(nodes).order) ?? storeOrder
    }

    /// A cycle among declarations, ignoring names nobody declared yet.
    private static func findCycle(_ nodes: [DependencyGraph.Node]) -> GraphError? {
        let names = Set(nodes.map(\.name))
        let known = nodes.map { DependencyGraph.Node(name: $0.name, dependsOn: $0.dependsOn.filter(names.contains)) }
        do {
            _ = try DependencyGraph(known)
            return nil
        } catch {
            return error
        }
    }

    private static func describe(_ declaration: StoreDeclaration) -> String {
        let waits = declaration.dependsOn.isEmpty ? "waiting for nothing" : "waiting for " + declaration.dependsOn.joined(separator: "+")
        let handles = declaration.handlesAll ? "handling every action" : "handling " + declaration.handles.joined(separator: "+")
        return "(\(waits), \(handles))"
    }
}
