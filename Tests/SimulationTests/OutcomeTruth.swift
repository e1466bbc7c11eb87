import Flux
@testable import FluxBus
import FluxBusProtocol

/// "An outcome reported as not applied is never applied", and the converse: what clients were told a store did in
/// a dispatch against what its replicas did, whenever they did it (live, replaying, or after a restart). `unknown`
/// promises nothing either way; `failed` and `skipped` promise that no replica ever applies the action to the store;
/// `ok` promises that none fails or skips it.
struct OutcomeTruth {
    private struct Key: Hashable {
        let sequence: UInt64
        let store: String
    }

    /// What clients were told, per store: ok, or not applied (failed/skipped). Unknown is not kept.
    private var told: [Key: (applied: Bool, request: String)] = [:]
    /// What replicas did: which applied the store, and which refused it.
    private var ran: [Key: (applied: [String], refused: [String])] = [:]

    /// Records an answer's outcomes: a store's replicas merged by the rule clients use.
    mutating func told(_ request: String, sequence: UInt64, outcomes: [Outcome], planned: Set<String>) -> String? {
        // An unknown outcome without a store is the whole action's (a batch's action whose record a restarted
        // coordinator could not read): it promises nothing of any store.
        if outcomes.contains(where: { $0.store.isEmpty && $0.status == .unknown }) { return nil }
        for store in planned {
            let replicas = outcomes.filter { $0.store == store }
            let merged = replicas.isEmpty
                ? DependencyExecution.Settlement.ok
                : DependencyExecution.Settlement.merging(replicas.map { .init($0.status, message: $0.message) })
            guard let merged, merged.status != .unknown else { continue }
            let key = Key(sequence: sequence, store: store)
            told[key] = (merged.status == .ok, request)
            if let violation = compare(key) { return violation }
        }
        // A store the answer names without planning it (not ready, or joined while the dispatch was in flight) was
        // told skipped: no replica may apply it, live or replaying its history.
        for outcome in outcomes where !planned.contains(outcome.store) && outcome.status == .skipped && !outcome.store.isEmpty {
            let key = Key(sequence: sequence, store: outcome.store)
            told[key] = (false, request)
            if let violation = compare(key) { return violation }
        }
        return nil
    }

    /// Forgets what replicas did after `sequence`: a power cut lost those dispatches before anyone was told of them.
    mutating func forgetRuns(after sequence: UInt64) {
        ran = ran.filter { $0.key.sequence <= sequence }
    }

    /// Forgets what `worker` did after `sequence`: it starts over from a checkpoint there (or empty, from 0), so
    /// none of those runs is kept anywhere.
    mutating func forgetRuns(of worker: String, after sequence: UInt64) {
        for key in ran.keys where key.sequence > sequence {
            ran[key]!.applied.removeAll { $0 == worker }
            ran[key]!.refused.removeAll { $0 == worker }
        }
    }

    /// Records one replica's run of a store in a dispatch.
    mutating func ran(_ store: String, sequence: UInt64, on worker: String, status: OutcomeStatus) -> String? {
        let key = Key(sequence: sequence, store: store)
        var record = ran[key] ?? ([], [])
        if status == .ok { record.applied.append(worker) } else { record.refused.append(worker) }
        ran[key] = record
        return compare(key)
    }

    private func compare(_ key: Key) -> String? {
        guard let told = told[key], let ran = ran[key] else { return nil }
        if !told.applied, let worker = ran.applied.first {
            return "request \(told.request) was told \(key.store) did not apply #\(key.sequence), but \(worker) applied it"
        }
        if told.applied, let worker = ran.refused.first {
            return "request \(told.request) was told \(key.store) applied #\(key.sequence), but \(worker) failed or skipped it"
        }
        return nil
    }
}
