import Foundation

/// How `fluxbus bench` runs its distributed scenarios.
public struct BenchSettings: Sendable {
    /// The `fluxbus` binary the coordinator, workers and baseline peers are started from.
    public var executable: URL
    /// Measured operations; nil for each scenario's default.
    public var count: Int?
    /// Unrecorded operations before measuring; nil for each scenario's default.
    public var warmup: Int?
    /// Rounds of the in-process scenarios; nil for 7 (3 with `quick`).
    public var rounds: Int?
    /// The size of each dispatched action's JSON payload, padded with a `pad` field.
    public var payloadBytes = 64
    /// Worker processes for `memory` and `durable-*` (default 1); `workers-N` names its own.
    public var workers: Int?
    /// Entries in the `kv` store of `large-state` and `snapshot-join`; nil for 1,000,000.
    public var stateEntries: Int?
    /// A tiny smoke run.
    public var quick = false
    /// Skip the pipelined half of the dispatch scenarios, so that every dispatch is lock-step (to count the
    /// syscalls of one lock-step dispatch under `strace -c`, see docs/BENCHMARKS.md).
    public var lockStepOnly = false
    /// An existing cluster's control endpoint; nil to start one on this machine.
    public var control: String?
    /// The existing cluster's coordinator process id, for its CPU and memory figures (same machine only).
    public var coordinatorPID: Int32?

    public init(executable: URL) { self.executable = executable }

    /// The measured count for a scenario whose full-run default is `full`.
    func count(default full: Int, quick: Int) -> Int { count ?? (self.quick ? quick : full) }

    /// The warm-up for a scenario: 10% of the default count, at most 1,000.
    func warmup(for count: Int) -> Int { warmup ?? (quick ? 20 : min(1_000, max(count / 10, 1))) }
}

/// JSON payloads padded to a size, so the bus carries the same bytes as the baseline.
enum PaddedJSON {
    /// `{…fields…,"pad":"xxx"}` of exactly `bytes` bytes, or the bare object when it is already larger.
    static func make(_ fields: String, bytes: Int) -> [UInt8] {
        let bare = "{\(fields)}"
        let overhead = bare.utf8.count + #","pad":"""#.utf8.count
        guard bytes > overhead else { return Array(bare.utf8) }
        return Array("{\(fields),\"pad\":\"\(String(repeating: "x", count: bytes - overhead))\"}".utf8)
    }
}
