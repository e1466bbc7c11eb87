import FluxBusProtocol

/// Publishing on the PUB stream: each message goes out with the rest of the burst, except a COMPLETED, which may
/// wait for the next publication (``HeldCompletions``).
extension CoordinatorEngine {
    func publish(_ message: consuming Message) {
        if case .completed = message, configuration.completedWindow > .zero, !isShuttingDown {
            return heldCompletions.hold(message, at: now, window: configuration.completedWindow)
        }
        releaseHeldCompletions()
        publishNow(message)
    }

    /// Publishes the COMPLETEDs held (``HeldCompletions``), ahead of whatever is published next.
    func releaseHeldCompletions() {
        guard !heldCompletions.isEmpty else { return }
        for completed in heldCompletions.take() { publishNow(completed) }
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

    private func publishNow(_ message: consuming Message) {
        lastPublishAt = now
        guard let outgoing else { return outbox.hold(message, for: .stream) }
        outgoing(&message)
        outbox.hold(message, for: .stream)
    }
}
