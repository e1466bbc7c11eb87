#if DEBUG
/// Bugs planted on purpose, to show that the simulation tests catch them. Debug builds only: a release build has
/// neither this type nor the code paths it switches on, and nothing but the simulation tests sets it.
enum PlantedBug: String, CaseIterable, Sendable {
    /// A worker runs an ACTION that arrives after a gap instead of fetching what it lacks.
    case workerSkipsGapCheck
    /// A worker runs an ACTION it already applied again, instead of re-acknowledging it from memory.
    case workerReappliesDuplicates
    /// A worker acknowledges every step of an ACTION as ok when it arrives, before running the handlers.
    case workerAcknowledgesBeforeApplying
    /// A worker reuses the plan it prepared last for an equal plan even when other stores run here now (a snapshot
    /// brought one past the sequence, or a poison mark stops one).
    case workerReusesAStalePlan
    /// A worker catching up moves past an entry it replays alone (``WorkerEngine/replayAlone``) without running the
    /// store's handler.
    case workerSkipsWhatItReplaysAlone
    /// A worker acknowledges a live ACTION it runs alone (``WorkerEngine/runAlone``) as ok without running the store's
    /// handler.
    case workerSkipsWhatItRunsAlone
    /// A worker sends a wrong digest for the first result of each ACKS run (a run's digests travel apart from its
    /// results), while a single ACK is right.
    case workerMisstatesDigestsInRuns
    /// The coordinator publishes actions before their log records are committed.
    case coordinatorPublishesBeforeLogging
    /// The coordinator never runs the log's sync that it defers past publishing: it answers for actions that only
    /// the page cache holds.
    case coordinatorAnswersBeforeTheSync
    /// The coordinator does not look retried request ids up: a retry becomes a new action.
    case coordinatorForgetsRequestIDs
    /// The coordinator stops on a failed log write without answering the requesters waiting for it.
    case coordinatorStopsWithoutAnswering
    /// The coordinator drops the COMPLETEDs it held for its next publication when their window ends, instead of
    /// publishing them alone.
    case coordinatorDropsHeldCompletions
    /// The coordinator does not hold what its dependents' replicas say they read to the outcomes it records: a
    /// replica that ran on another outcome goes unseen.
    case coordinatorIgnoresWhatDependentsRead
}
#endif
