import FluxBusProtocol

/// Lays a traced dispatch out on the coordinator's timeline, in microseconds from its receipt of the DISPATCH.
///
/// The coordinator's steps are its own clock's readings. A worker's figures are on the worker's clock, from its
/// receipt of the ACTION; the two clocks are never subtracted from each other. Instead the worker's receipt is placed
/// where every message exchanged with it is consistent: after the ACTION was published, after each RELEASE it
/// waited for was sent (less the time it waited), and before each of its ACKs arrived (less the time until it left).
/// Within that window the leftover is network and queueing time, split evenly between the way out and the way back;
/// it appears as `network` steps.
struct TraceWaterfall {
    let trace: RequestTrace
    let answeredAt: MonotonicTime

    var steps: [TraceStep] {
        var steps: [TraceStep] = []
        func add(_ process: String, _ step: String, _ start: Int64, _ end: Int64) {
            steps.append(TraceStep(process: process, step: step, startMicros: UInt64(max(0, start)), endMicros: UInt64(max(0, max(start, end)))))
        }
        let published = micros(trace.publishedAt ?? trace.receivedAt)
        add("coordinator", "receive DISPATCH", 0, 0)
        if let commit = trace.commit { add("coordinator", "log commit", micros(commit.lowerBound), micros(commit.upperBound)) }
        add("coordinator", "publish ACTION #\(trace.sequence)", published, published)
        if let sync = trace.sync { add("coordinator", "log sync", micros(sync.lowerBound), micros(sync.upperBound)) }
        for release in trace.releases {
            if let commit = release.commit {
                add("coordinator", "log commit \(release.store) outcome", micros(commit.lowerBound), micros(commit.upperBound))
            }
            let sent = micros(release.sentAt)
            add("coordinator", "send RELEASE \(release.store) → \(release.worker)", sent, sent)
        }
        for worker in workersInOrder {
            let acks = trace.acks.filter { $0.worker == worker }
            let origin = placement(of: worker, acks: acks, published: published)
            add("network", "ACTION → \(worker)", published, origin)
            for ack in acks {
                let arrived = micros(ack.arrivedAt)
                for timing in ack.timings {
                    if let sent = releaseSent(before: timing.store, to: worker) {
                        add("network", "RELEASE → \(worker) (\(timing.store) ready)", sent, origin + Int64(timing.readyMicros))
                    }
                    add(worker, "run \(timing.store)", origin + Int64(timing.startedMicros), origin + Int64(timing.finishedMicros))
                    add("network", "ACK \(timing.store) ← \(worker)", origin + Int64(timing.sentMicros), arrived)
                }
                add("coordinator", "receive ACK \(ack.timings.map(\.store).joined(separator: ",")) from \(worker)", arrived, arrived)
            }
        }
        let answered = micros(answeredAt)
        add("coordinator", "send RESULT", answered, answered)
        return steps.enumerated().sorted {
            ($0.element.startMicros, $0.element.endMicros, $0.offset) < ($1.element.startMicros, $1.element.endMicros, $1.offset)
        }.map(\.element)
    }

    /// Workers in the order of the plan's stores they ran.
    private var workersInOrder: [String] {
        var seen: [String] = []
        for step in trace.plan {
            for ack in trace.acks where ack.timings.contains(where: { $0.store == step.store }) && !seen.contains(ack.worker) {
                seen.append(ack.worker)
            }
        }
        return seen
    }

    /// Where the worker's receipt of the ACTION goes on the coordinator's timeline: the middle of the window that
    /// every exchange with it allows.
    private func placement(of worker: String, acks: [RequestTrace.AckArrival], published: Int64) -> Int64 {
        var earliest = published
        var latest = Int64.max
        for ack in acks {
            for timing in ack.timings {
                if let sent = releaseSent(before: timing.store, to: worker) { earliest = max(earliest, sent - Int64(timing.readyMicros)) }
                latest = min(latest, micros(ack.arrivedAt) - Int64(timing.sentMicros))
            }
        }
        guard latest != .max, latest > earliest else { return earliest }
        return earliest + (latest - earliest) / 2
    }

    /// When the last RELEASE this worker needed for `store` was sent: of the stores it waits for.
    private func releaseSent(before store: String, to worker: String) -> Int64? {
        guard let waitsFor = trace.plan.first(where: { $0.store == store })?.waitsFor, !waitsFor.isEmpty else { return nil }
        return trace.releases.filter { $0.worker == worker && waitsFor.contains($0.store) }.map { micros($0.sentAt) }.max()
    }

    private func micros(_ time: MonotonicTime) -> Int64 { (time - trace.receivedAt).microseconds }
}
