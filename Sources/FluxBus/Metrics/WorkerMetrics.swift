import CoreMetrics
import Flux
import FluxBusProtocol

/// A worker's Prometheus metrics: each hosted store's handler time and outcomes, and the worker's phase and last
/// applied sequence. The shell owns it: it hears the engine's ``WorkerEvent``s, and each store tells it how long its
/// handler took. Store names are known at start, so nothing is made per dispatch.
final class WorkerMetrics {
    let registry: MetricsRegistry
    private let applied: [String: [CoreMetrics.Counter]]
    private let lastApplied: CoreMetrics.Gauge
    private let phases: [(WorkerEngine.Phase, CoreMetrics.Gauge)]

    /// Starts timing the handlers of `stores`.
    init(registry: MetricsRegistry, stores: [AnyStore]) {
        self.registry = registry
        var applied: [String: [CoreMetrics.Counter]] = [:]
        for store in stores {
            let timer = registry.timer("fluxbus_handler_duration_seconds", [("store", store.name)])
            store.onHandled = { timer.recordNanoseconds($0.nanosecondsClamped) }
            applied[store.name] = OutcomeStatus.allCases.map {
                registry.counter("fluxbus_store_dispatches_total", [("store", store.name), ("outcome", "\($0)")])
            }
        }
        self.applied = applied
        lastApplied = registry.gauge("fluxbus_worker_last_applied_sequence")
        let named: [(WorkerEngine.Phase, String)] = [
            (.joining, "joining"), (.catchingUp, "catching-up"), (.live, "live"), (.stopped, "stopped"),
        ]
        phases = named.map { phase, name in (phase, registry.gauge("fluxbus_worker_phase", [("phase", name)])) }
    }

    /// What the engine reported.
    func observe(_ event: WorkerEvent) {
        guard case .applied(_, let store, let status) = event else { return }
        applied[store]?[Int(status.rawValue)].increment()
    }

    /// About once a second: the phase (1 for the one it is in) and the last sequence applied.
    func sample(_ engine: WorkerEngine) {
        lastApplied.record(Int64(clamping: engine.lastApplied))
        for (phase, gauge) in phases { gauge.record(phase == engine.phase ? 1 : 0) }
    }
}
