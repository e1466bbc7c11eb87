import FluxBusProtocol

/// Hand-written messages: one of every command, and the exchanges `docs/PROTOCOL.md` shows.
enum Examples {
    static func utf8(_ text: String) -> [UInt8] { Array(text.utf8) }

    /// The flight example's country store state after `country-update {"country":"France"}`.
    static let countryState = utf8(#"{"country":"France"}"#)

    // MARK: The exchanges of docs/PROTOCOL.md, "Example exchanges"

    /// Worker `w1`, hosting `country`, joins a fresh bus.
    static let joinHello = Message.hello(.init(
        workerID: "w1",
        instance: 0x5EED_0000_0000_0001,
        stores: [.init(name: "country", dependsOn: [], handlesAll: false, handles: ["country-update"], lastApplied: 0)]
    ))
    static let joinWelcome = Message.welcome(.init(
        epoch: 1, sequence: 0, publishEndpoint: "tcp://127.0.0.1:7400", heartbeatMillis: 500, deadlineMillis: 2000
    ))
    static let joinHeartbeat = Message.heartbeat(.init(epoch: 1, sequence: 0))
    static let joinReady = Message.ready(.init(epoch: 1, lastApplied: 0))

    /// A client dispatches `country-update`; `w1`'s country store handles it.
    static let dispatchRequest = Message.dispatch(.init(
        requestID: "req-1", actionType: "country-update", payload: utf8(#"{"country":"France"}"#)
    ))
    static let dispatchAction = Message.action(.init(
        epoch: 1, sequence: 1, actionType: "country-update", payload: utf8(#"{"country":"France"}"#),
        plan: [.init(store: "country", waitsFor: [])]
    ))
    static let dispatchAck = Message.ack(.init(epoch: 1, sequence: 1, results: [
        .init(store: "country", status: .ok, output: countryState, digest: StateDigest.fnv1a64(countryState)),
    ]))
    static let dispatchResult = Message.result(.init(
        requestID: "req-1", epoch: 1, sequence: 1, elapsedMicros: 1250,
        outcomes: [.init(store: "country", worker: "w1", status: .ok, digest: StateDigest.fnv1a64(countryState))]
    ))

    /// A fresh replica of `kv` joins from a 39-byte snapshot, in chunks of 16 bytes (FluxBus's are 1 MiB).
    static let kvState = utf8(#"{"a":{"qty":1},"b":{"qty":2},"c":"xyz"}"#)
    static let snapshotHeader = Message.snapshot(.init(
        epoch: 1, store: "kv", sequence: 7, digest: 0x1D16_E570_0000_0007, size: UInt64(kvState.count),
        checksum: StateDigest.fnv1a64(kvState), transfer: "snapshot/7/kv", state: Array(kvState[0..<16])
    ))
    static let snapshotPull = Message.pull(.init(transfer: "snapshot/7/kv", offset: 16, maxBytes: 16))
    static let snapshotChunk = Message.chunk(.init(transfer: "snapshot/7/kv", offset: 16, bytes: Array(kvState[16..<32])))

    /// The named exchanges, in the order the document shows them.
    static let documented: [(name: String, message: Message)] = [
        ("join-hello", joinHello), ("join-welcome", joinWelcome), ("join-heartbeat", joinHeartbeat),
        ("join-ready", joinReady),
        ("dispatch-dispatch", dispatchRequest), ("dispatch-action", dispatchAction),
        ("dispatch-ack", dispatchAck), ("dispatch-result", dispatchResult),
        ("snapshot-header", snapshotHeader), ("snapshot-pull", snapshotPull), ("snapshot-chunk", snapshotChunk),
    ]

    // MARK: One of every command, with non-ASCII text, absent and present optionals

    static let all: [Message] = [
        .hello(.init(workerID: "wörker-1", instance: .max, stores: [
            .init(name: "country", handlesAll: true, lastApplied: 41),
            .init(name: "city", dependsOn: ["country"], handlesAll: false, handles: ["country-update", "city-update"]),
        ])),
        .welcome(.init(epoch: 7, sequence: 41, publishEndpoint: "tcp://127.0.0.1:7400", heartbeatMillis: 500, deadlineMillis: 2000)),
        .reject(.init(code: .cycle, reason: "city → price → city would be a cycle")),
        .ready(.init(epoch: 7, lastApplied: 41)),
        .action(.init(epoch: 7, sequence: 42, actionType: "city-update", payload: utf8(#"{"city":"Zürich"}"#),
                      error: "validation: 城市 unknown", plan: [.init(store: "city"), .init(store: "price", waitsFor: ["city"])],
                      traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")),
        .release(.init(epoch: 7, sequence: 42, outputs: [
            .init(store: "city", status: .ok, output: utf8(#"{"city":"Zürich"}"#)),
            .init(store: "country", status: .failed, message: "boom 💥"),
        ])),
        .ack(.init(epoch: 7, sequence: 42, results: [
            .init(store: "price", status: .skipped, message: "dependency city failed", digest: 0xDEAD_BEEF),
            .init(store: "city", status: .ok, output: [], digest: 1),
        ], timings: [
            .init(store: "price", readyMicros: 0, startedMicros: 3, finishedMicros: 3, sentMicros: 90),
            .init(store: "city", readyMicros: 0, startedMicros: 4, finishedMicros: 81, sentMicros: 90),
        ])),
        .fetch(.init(epoch: 0, from: 1, to: 41)),
        .replay(.init(epoch: 7, entries: [
            .init(epoch: 6, sequence: 40, actionType: "kv.set", payload: utf8(#"{"key":"k","value":1}"#),
                  plan: [.init(store: "kv")], outputs: [.init(store: "kv", status: .unknown, message: "no live replica")]),
            .init(epoch: 7, sequence: 41, actionType: "kv.delete", payload: [0x00, 0xFF], error: "",
                  plan: [], outputs: []),
        ])),
        .heartbeat(.init(epoch: 7, sequence: 42)),
        .goodbye(.init(reason: "SIGTERM: au revoir")),
        .snapshot(.init(epoch: 7, store: "counter", sequence: 42, digest: StateDigest.fnv1a64(utf8(#"{"value":3}"#)),
                        state: utf8(#"{"value":3}"#))),
        .dispatch(.init(requestID: "req-ü", actionType: "counter.add", payload: utf8(#"{"by":1}"#), error: nil,
                        traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")),
        .result(.init(requestID: "req-ü", epoch: 7, sequence: 43, elapsedMicros: 987, outcomes: [
            .init(store: "counter", worker: "w1", status: .ok, digest: 5),
            .init(store: "counter", worker: "", status: .unknown, message: "no live replica", digest: 0),
        ], trace: [
            .init(process: "coordinator", step: "receive DISPATCH", startMicros: 0, endMicros: 0),
            .init(process: "w1", step: "run counter", startMicros: 412, endMicros: 470),
        ])),
        .error(.init(requestID: "req-2", code: .busy, message: "queue full (1024 waiting)")),
        .statusRequest(.init(requestID: "s-1")),
        .status(.init(requestID: "s-1", epoch: 7, sequence: 43, queueLength: 2, publishEndpoint: "tcp://127.0.0.1:7400",
                      workers: [.init(id: "w1", state: .catchingUp, stores: ["country", "city"], lastApplied: 40, heartbeatAgeMillis: 120)],
                      stores: [.init(name: "city", dependsOn: ["country"], handlesAll: false, handles: ["city-update"],
                                     waitingFor: ["country"], divergedAt: 0,
                                     replicas: [.init(worker: "w1", lastApplied: 40, digest: 9), .init(worker: "w2", lastApplied: 43, digest: 10)])],
                      figures: .init(dispatchesTotal: 40, actionsTotal: 43, dispatchRateMilli: 2500, actionRateMilli: 3000,
                                     latencySamples: 43, latencyP50Micros: 150, latencyP90Micros: 420, latencyP99Micros: 900,
                                     latencyMaxMicros: 1200))),
        .graphRequest(.init(requestID: "g-1")),
        .graph(.init(requestID: "g-1", stores: [
            .init(name: "country", dependsOn: [], handlesAll: true, handles: [], replicas: 1),
            .init(name: "price", dependsOn: ["city"], handlesAll: false, handles: ["country-update", "city-update"], replicas: 0),
        ])),
        .stateRequest(.init(requestID: "st-1", store: "price")),
        .state(.init(requestID: "st-2", store: "kv", worker: "w3", sequence: 44, digest: 78, size: 3_000_000,
                     checksum: 0x0123_4567_89AB_CDEF, state: utf8(#"{"entries":{"k1""#))),
        .completed(.init(epoch: 7, sequence: 43, actionType: "counter.add", elapsedMicros: 12, outcomes: [
            .init(store: "counter", worker: "w1", status: .failed, message: "overflow", digest: 3),
        ])),
        .dispatchBatch(.init(requestID: "batch-1", actions: [
            BatchAction(actionType: "counter.add", payload: utf8(#"{"by":1}"#)),
            BatchAction(actionType: "country-update", payload: utf8(#"{"country":"Atlantis"}"#), error: "offline"),
        ])),
        .batchResult(.init(requestID: "batch-1", epoch: 7, firstSequence: 44, count: 2, elapsedMicros: 310, failures: [
            BatchFailure(sequence: 45, outcome: .init(store: "city", worker: "w2", status: .failed, message: "no city", digest: 8)),
        ], outcomes: [.init(store: "country", worker: "w1", status: .ok, digest: 6)])),
        Codec().bundle([
            .heartbeat(.init(epoch: 7, sequence: 42)),
            .ack(.init(epoch: 7, sequence: 43, results: [.init(store: "counter", status: .ok, digest: 5)])),
        ]),
        .pull(.init(transfer: "st-2", offset: 1 << 20, maxBytes: 1 << 20)),
        .chunk(.init(transfer: "snapshot/42/kv", offset: 17, bytes: utf8(#":{"qty":1},"k2""#))),
        .actions(.init(epoch: 7, firstSequence: 44, actionType: "counter.add", plan: [.init(store: "counter")], entries: [
            ActionEntry(payload: utf8(#"{"by":1}"#)),
            ActionEntry(payload: utf8(#"{"by":2}"#), error: "validation: zu groß"),
        ])),
        .acks(.init(epoch: 7, firstSequence: 44, count: 2, results: [
            .init(store: "counter", status: .ok, digest: 0),
            .init(store: "städte", status: .skipped, message: "not ready", digest: 0),
        ], digests: bigEndian([5, 9, 6, 9]))),
        .completions(.init(epoch: 7, firstSequence: 44, count: 2, actionType: "counter.add", outcomes: [
            .init(store: "counter", worker: "wörker-1", status: .ok, digest: 0),
        ], elapsedMicros: bigEndian([310, 290]), digests: bigEndian([5, 6]))),
    ]

    /// Values of 8 bytes each, big-endian: a run's digests and times.
    static func bigEndian(_ values: [UInt64]) -> [UInt8] {
        values.flatMap { value in withUnsafeBytes(of: value.bigEndian) { Array($0) } }
    }
}
