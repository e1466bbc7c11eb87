import FluxBusProtocol

/// Publishing on the PUB stream: each message goes out with the rest of the burst, except a COMPLETED, which may
/// wait for the next publication (``HeldCompletions``).
extension CoordinatorEngine {
    func publish(_ message: consuming Message) {
        // Seen by the shell (its metrics count completions) when it is made, not when it leaves: a COMPLETED held for
        // the next ACTION has completed already.
        if let outgoing { outgoing(&message) }
        if case .completed = message, configuration.completedWindow > .zero, !isShuttingDown {
            return heldCompletions.hold(message, at: now, window: configuration.completedWindow)
        }
        releaseHeldCompletions()
        holdForTheStream(message)
    }

    /// Publishes the COMPLETEDs held (``HeldCompletions``), ahead of whatever is published next.
    func releaseHeldCompletions() {
        guard !heldCompletions.isEmpty else { return }
        for completed in heldCompletions.take() { holdForTheStream(completed) }
    }

    func endCompletedWindow() {
        #if DEBUG
        if plantedBug == .coordinatorDropsHeldCompletions { return _ = heldCompletions.take() }
        #endif
        releaseHeldCompletions()
    }

    /// When the COMPLETEDs held must go out even if nothing else is published; nil when none is held. The shell
    /// sets a timer for it, which hands the engine ``CoordinatorInput/completedWindowEnded``.
    var heldCompletionsUntil: MonotonicTime? { heldCompletions.until }

    private func holdForTheStream(_ message: consuming Message) {
        lastPublishAt = now
        outbox.hold(message, for: .stream)
    }
}
