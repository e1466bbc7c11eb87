/// One dispatch's run through a plan of stores, in dependency order: which step may go next, and whether it must
/// be skipped because a store it waits for failed, was skipped, or was lost.
///
/// The rule is the same in process and on the bus: every step runs after the planned stores it waits for have
/// settled; a step whose dependency failed or was skipped is skipped itself (and so, in turn, are the steps waiting
/// for it), and independent steps still run. The type does no I/O and runs nothing: the caller asks for
/// ``nextRunnable()``, runs the store (or not, when the answer carries a ``Blocker``), and ``record(_:_:)``s what
/// happened. Outcomes of stores that run elsewhere can be recorded whenever they arrive, in any order; only the
/// steps for which `runsHere` said yes are handed out.
///
/// A step that waits for a store missing from the plan (one that does not take part in this dispatch) does not wait
/// for it. The plan lists dependencies first, as ``DependencyGraph/order`` does.
///
/// ```swift
/// var execution = DependencyExecution([
///     .init(store: "country"),
///     .init(store: "city", waitsFor: ["country"]),
///     .init(store: "weather"),
/// ])
/// while let ready = execution.nextRunnable() {
///     if let blocker = ready.blockedBy {
///         execution.record(ready.store, .skipped(blocker.reason))  // "waits for `country`, which failed"
///     } else {
///         execution.record(ready.store, ready.store == "country" ? .failed("no such country") : .ok)
///     }
/// }
/// execution.settlement(of: "city")     // .skipped("waits for `country`, which failed")
/// execution.settlement(of: "weather")  // .ok
/// ```
public struct DependencyExecution: Sendable {
    /// One store of the plan and the stores it waits for.
    public struct Step: Sendable, Hashable {
        public var store: String
        /// Stores that must settle before this one runs; names not in the plan are not waited for.
        public var waitsFor: [String]

        public init(store: String, waitsFor: [String] = []) {
            self.store = store
            self.waitsFor = waitsFor
        }
    }

    /// How one store's part in the dispatch ended.
    public enum Settlement: Sendable, Hashable {
        /// The handler ran and returned.
        case ok
        /// The handler threw; the message says why.
        case failed(String)
        /// The store did not run; the reason names the dependency that stopped it.
        case skipped(String)
        /// No answer came: every replica of a store on the bus was lost.
        case lost(String)

        /// The message of a failure, or the reason a store was skipped or lost; nil for ``ok``.
        public var message: String? {
            switch self {
            case .ok: nil
            case .failed(let message), .skipped(let message), .lost(let message): message
            }
        }

        /// How a dependency ended, as a ``Blocker/reason`` says it: "failed", "was skipped", "was lost".
        public var phrase: String {
            switch self {
            case .ok: "succeeded"
            case .failed: "failed"
            case .skipped: "was skipped"
            case .lost: "was lost"
            }
        }

        /// One store's settlement across its replicas: the first failure if any failed, else the first skip, else
        /// ``ok`` if any succeeded, else the first loss; nil for no replicas.
        public static func merging(_ replicas: some Sequence<Settlement>) -> Settlement? {
            var skipped: Settlement?
            var ok = false
            var lost: Settlement?
            for replica in replicas {
                switch replica {
                case .failed: return replica
                case .skipped: if skipped == nil { skipped = replica }
                case .ok: ok = true
                case .lost: if lost == nil { lost = replica }
                }
            }
            return skipped ?? (ok ? .ok : lost)
        }
    }

    /// The dependency that stops a step, and how it ended.
    public struct Blocker: Sendable, Hashable {
        /// The first store the step waits for, in its `waitsFor` order, that stops it.
        public let dependency: String
        /// How that store ended: never ``Settlement/ok``.
        public let settlement: Settlement

        public init(dependency: String, settlement: Settlement) {
            self.dependency = dependency
            self.settlement = settlement
        }

        /// Why the step is skipped, for example "waits for `country`, which failed".
        public var reason: String { "waits for `\(dependency)`, which \(settlement.phrase)" }
    }

    /// A step whose dependencies have all settled, handed out once.
    public struct Ready: Sendable, Hashable {
        /// Its position in the plan.
        public let index: Int
        public let step: Step
        /// Set when the step must not run: record ``Settlement/skipped(_:)`` for it instead, usually with
        /// ``Blocker/reason``.
        public let blockedBy: Blocker?

        public var store: String { step.store }
    }

    private struct Slot: Sendable {
        /// This step's dependencies: a range of ``dependencyIndices``.
        var dependencies: Range<Int>
        var runsHere: Bool
        /// Handed out by ``nextRunnable()``, or settled.
        var taken = false
        var settlement: Settlement?
    }

    /// The steps, in the order given.
    public let plan: [Step]
    private var slots: [Slot] = []
    /// Every step's planned dependencies as plan indices, one step after another.
    private var dependencyIndices: [Int] = []
    /// No local step before this index is still to be handed out.
    private var cursor = 0
    private var unsettledHere = 0

    /// Starts a run through `plan`.
    /// - Parameters:
    ///   - plan: the steps, dependencies first; a store named twice counts once, the first time.
    ///   - runsHere: whether a store runs in this process; the others are only recorded.
    public init(_ plan: [Step], runsHere: (String) -> Bool = { _ in true }) {
        self.plan = plan
        slots.reserveCapacity(plan.count)
        for (index, step) in plan.enumerated() {
            let start = dependencyIndices.count
            for dependency in step.waitsFor {
                if let position = Self.position(of: dependency, in: plan), position != index {
                    dependencyIndices.append(position)
                }
            }
            let local = runsHere(step.store) && Self.position(of: step.store, in: plan) == index
            slots.append(Slot(dependencies: start..<dependencyIndices.count, runsHere: local))
            if local { unsettledHere += 1 }
        }
    }

    /// Records how a store ended, whether it ran here or elsewhere. The first record of a store counts.
    /// - Returns: false, changing nothing, when the store is not in the plan or already settled.
    @discardableResult
    public mutating func record(_ store: String, _ settlement: Settlement) -> Bool {
        guard let index = Self.position(of: store, in: plan), slots[index].settlement == nil else { return false }
        slots[index].settlement = settlement
        slots[index].taken = true
        if slots[index].runsHere { unsettledHere -= 1 }
        return true
    }

    /// The first step, in plan order, that runs here, has not been handed out, and whose planned dependencies have
    /// all settled; nil when none is ready now. Each step is handed out once: record its outcome to release the
    /// steps waiting for it.
    public mutating func nextRunnable() -> Ready? {
        while cursor < slots.count, !slots[cursor].runsHere || slots[cursor].taken { cursor += 1 }
        for index in cursor..<slots.count {
            guard slots[index].runsHere, !slots[index].taken else { continue }
            var blocker: Blocker?
            var settled = true
            for position in dependencyIndices[slots[index].dependencies] {
                guard let settlement = slots[position].settlement else {
                    settled = false
                    break
                }
                if blocker == nil, settlement != .ok {
                    blocker = Blocker(dependency: plan[position].store, settlement: settlement)
                }
            }
            guard settled else { continue }
            slots[index].taken = true
            return Ready(index: index, step: plan[index], blockedBy: blocker)
        }
        return nil
    }

    /// How a store ended, or nil while it has not settled (or is not in the plan).
    public func settlement(of store: String) -> Settlement? {
        Self.position(of: store, in: plan).flatMap { slots[$0].settlement }
    }

    /// Stops handing out `store` here: it settles elsewhere now, like a remote store (a worker's snapshot brought it
    /// past this dispatch). Nothing changes if it was already handed out or settled.
    public mutating func stopRunningHere(_ store: String) {
        guard let index = Self.position(of: store, in: plan), slots[index].runsHere, !slots[index].taken else { return }
        slots[index].runsHere = false
        unsettledHere -= 1
    }

    /// Whether every step that runs here has settled.
    public var isFinished: Bool { unsettledHere == 0 }

    /// Whether every step of the plan has settled, here or elsewhere.
    public var isSettled: Bool { slots.allSatisfy { $0.settlement != nil } }

    /// Plans hold tens of stores: a scan is cheaper than a dictionary built per dispatch.
    private static func position(of store: String, in plan: [Step]) -> Int? {
        plan.firstIndex { $0.store == store }
    }
}
