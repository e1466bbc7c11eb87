import FluxBusProtocol

/// What STATUS and GRAPH show of the bus: workers, stores with their replicas, digests and poisoned actions.
extension CoordinatorEngine {
    func status(requestID: String) -> Message.Status {
        // Read once: each use of the engine's `membership` inside the closures below copied the whole struct,
        // retaining every table in it, once per store (issue 17, `status-rtt`).
        let membership = membership
        let workers = membership.workerOrder.compactMap { membership.workers[$0] }.map { worker in
            WorkerStatus(
                id: worker.id, state: worker.state, stores: worker.stores.map(\.name), lastApplied: worker.lastApplied,
                heartbeatAgeMillis: UInt32(clamping: (now - worker.lastHeard).milliseconds))
        }
        let stores = membership.storesInOrder.map { store in
            StoreStatus(
                name: store.declaration.name, dependsOn: store.declaration.dependsOn,
                handlesAll: store.declaration.handlesAll, handles: store.declaration.handles,
                waitingFor: membership.waitingFor(store.declaration.name), divergedAt: store.divergedAt,
                replicas: store.replicas.compactMap { membership.workers[$0] }.map { worker in
                    Replica(worker: worker.id, lastApplied: worker.digests[store.declaration.name]?.sequence ?? worker.lastApplied,
                            digest: worker.digests[store.declaration.name]?.digest ?? 0)
                },
                snapshotSequence: log.snapshots[store.declaration.name]?.sequence ?? 0)
            .withPoisonFigures(poisonFigures(of: store.declaration.name))
            .withHistory(log.histories[store.declaration.name] ?? .none)
        }
        return Message.Status(
            requestID: requestID, epoch: epoch, sequence: lastCompleted,
            queueLength: UInt32(clamping: queue.actionCount + flights.inFlightCount),
            publishEndpoint: advertisedPublishEndpoint, workers: workers, stores: stores,
            logPath: log.path ?? "", logSync: log.directory == nil ? "memory" : log.sync.rawValue,
            logOldest: log.oldestRetained, logLast: lastLogged, retain: UInt64(configuration.retain))
    }

    func graph(requestID: String) -> Message.Graph {
        // Dependencies first, as GRAPH promises, whatever order the workers joined in. Stores still waiting for an
        // undeclared name are ordered by the names that are declared; join-time checks keep this graph acyclic.
        return Message.Graph(
            requestID: requestID,
            stores: membership.storesInOrder.map { store in
                GraphNode(
                    name: store.declaration.name, dependsOn: store.declaration.dependsOn,
                    handlesAll: store.declaration.handlesAll, handles: store.declaration.handles,
                    replicas: UInt16(clamping: membership.liveReplicas(of: store.declaration.name).count))
            })
    }
}
