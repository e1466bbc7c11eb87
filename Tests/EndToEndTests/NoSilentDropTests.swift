import Foundation
import FluxBus
import Synchronization
import FluxBusProtocol
import Testing
import ZeroMQ

/// Nothing dropped without an answer, with real processes: a coordinator whose disk fills up answers every waiting
/// client before it exits 5; a request over the size limits is answered, or refused before it is sent.
@Suite("No silent drops", .timeLimit(.minutes(1)))
struct NoSilentDropTests {
    /// A payload of `bytes` bytes for `counter.add`: the counter ignores the padding.
    static func padded(_ bytes: Int) -> String { #"{"by":1,"pad":""# + String(repeating: "x", count: bytes) + #""}"# }

    /// The file size limit (RLIMIT_FSIZE, `ulimit -f`, here 1 MiB in dash's 512-byte blocks) stands in for a full
    /// disk: a write past it fails with EFBIG as a write to a full disk fails with ENOSPC, and SQLite reports both as
    /// a failed write. SIGXFSZ is ignored, so that the write fails instead of killing the process.
    @Test func aCoordinatorWhoseDiskFillsAnswersEveryWaitingClientThenExitsFive() async throws {
        let cluster = try Cluster()
        let data = cluster.directory.appendingPathComponent("data").path
        // A long deadline: the worker stopped below must hold the dispatch in flight, not be written off.
        let coordinator = try cluster.launch(
            "coordinator", executable: URL(fileURLWithPath: "/bin/sh"),
            arguments: [
                "-c", #"trap '' XFSZ; ulimit -f 2048; exec "$0" "$@""#, Cluster.binary.path, "coordinator",
                "--control", cluster.control, "--publish", cluster.publish, "--data-dir", data,
                "--heartbeat-ms", "10000", "--ack-timeout", "50",
            ])
        let worker = try cluster.startWorker("w1", stores: ["counter=counter"])
        let observer = try await cluster.client(timeout: .seconds(2))
        try await cluster.waitUntilLive(1, client: observer)
        kill(worker.processIdentifier, SIGSTOP)
        defer { kill(worker.processIdentifier, SIGCONT) }

        // One dispatch in flight, held by the stopped worker; then large ones queue behind it, one at a time, each
        // sent once the one before is queued, until the log could not take one, and every request waiting was
        // answered. A request sent in the instant between the failure and its answers arriving may be refused as
        // shutting down, or (once the process is gone) get no answer: it was never accepted.
        let answered = AnswerCount()
        var clients: [BusClient] = []
        var tasks: [Task<BusError?, Never>] = []
        func send(_ json: String) async throws {
            let client = try await cluster.client(timeout: .seconds(15))
            clients.append(client)
            tasks.append(Task {
                defer { answered.count.withLock { $0 += 1 } }
                do {
                    _ = try await client.dispatch("counter.add", json: json)
                    return nil
                } catch {
                    return error as? BusError
                }
            })
        }
        try await send(#"{"by":1}"#)
        // The coordinator logs the failure before it sends anything for that step, so a STATUS that arrives after
        // it finds the line in its log.
        func failed() -> Bool {
            answered.count.withLock { $0 } > 0 || cluster.log("coordinator").contains("the log cannot be written")
        }
        for index in 1...40 where !failed() {
            try await send(Self.padded(200_000))
            while !failed() {
                if let status = try? await observer.status(timeout: .seconds(1)), status.queueLength >= index + 1, !failed() { break }  // queued, and the one in flight
                try await Task.sleep(for: .milliseconds(20))
            }
        }
        coordinator.waitUntilExit()
        #expect(coordinator.terminationStatus == 5, "exit 5 on a storage failure:\n\(cluster.log("coordinator"))")
        var answers: [BusError?] = []
        for task in tasks { answers.append(await task.value) }
        let stopped = answers.lastIndex { $0?.remoteCode == .internal }
        let waited = try #require(stopped, "no request was answered as the log failed: \(answers)\n\(cluster.allLogs())")
        #expect(waited >= 2, "requests were queued before the log failed")
        for (index, answer) in answers.enumerated() where index <= waited {
            #expect(answer?.remoteCode == .internal, "request \(index) (of \(answers.count)) was answered \(String(describing: answer))")
            #expect(answer?.code == .unreachable, "the outcome is unknown, as after a timeout: exit 3")
            #expect(answer?.message.contains("send it again with the same request id") == true)
        }
        #expect(answers.count <= waited + 2, "at most one request raced the failure")
        for answer in answers.dropFirst(waited + 1) {
            #expect(answer?.remoteCode == .shuttingDown || answer?.remoteCode == nil, "\(String(describing: answer))")
        }
        for client in clients { await client.close() }
        await observer.close()
        kill(worker.processIdentifier, SIGCONT)
        await cluster.stop()
    }

    /// Over IPC, so that libzmq's own ZMQ_MAXMSGSIZE applies: a 17 MiB DISPATCH is over the protocol's 16 MiB, under
    /// the socket's 32 MiB, and the coordinator answers it instead of the connection being cut.
    @Test func aRealCoordinatorAnswersARequestOverTheProtocolsLimit() async throws {
        let cluster = try Cluster()
        try cluster.startCoordinator(["--in-memory"])
        let client = try await cluster.client()
        _ = try await client.status()
        let context = try ZMQContext()
        let endpoint = cluster.control
        let answer = try await Task.detached { () -> Message? in
            let dealer = try ZMQSocket(.dealer, context: context)
            defer { dealer.close() }
            try dealer.set(.linger, to: .zero)
            try dealer.connect(endpoint)
            let codec = Codec()
            let big = Message.dispatch(.init(requestID: "huge", actionType: "kv.set", payload: [UInt8](repeating: 0x31, count: 17 << 20)))
            _ = try dealer.send(codec.encode(big))
            return try dealer.receive(timeout: .seconds(30)).map { try codec.decode($0) }
        }.value
        guard case .error(let error)? = answer else {
            Issue.record("no ERROR for a 17 MiB DISPATCH: \(String(describing: answer))\n\(cluster.allLogs())")
            return
        }
        #expect(error.requestID == "huge")
        #expect(error.code == .invalidRequest)
        #expect(error.message.contains("is over the limit of 16777216 bytes for one message"))
        #expect(try await client.dispatch("noop").sequence == 1, "the coordinator still serves")
        await client.close()
        context.shutdown()
        await cluster.stop()
    }

    /// The CLI refuses a payload or a request id over the protocol's limits before sending: exit 2, at once, with
    /// the limit and the size, not a timeout asking whether the coordinator runs.
    @Test func theCommandLineRefusesARequestOverTheLimitsBeforeSending() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("fluxbus-limits-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let big = directory.appendingPathComponent("big.json")
        try Data(Self.padded(9 << 20).utf8).write(to: big)
        // Nothing listens there: only the client's own check can answer.
        let nowhere = "ipc://\(directory.path)/nobody"
        let payload = try CommandLineTests.fluxbus(["dispatch", "counter.add", "@\(big.path)", "--coordinator", nowhere, "--timeout", "50"])
        #expect(payload.status == 2)
        #expect(payload.error.contains("over FluxBus's limit of 8 MiB (8388608 bytes) for one payload"), "\(payload.error)")
        let longID = try CommandLineTests.fluxbus([
            "dispatch", "counter.add", #"{"by":1}"#, "--request-id", String(repeating: "r", count: 5_000),
            "--coordinator", nowhere, "--timeout", "50",
        ])
        #expect(longID.status == 2)
        #expect(longID.error.contains("the request id is 5000 bytes, over FluxBus's limit of 4096 bytes"), "\(longID.error)")
    }
}

/// Requests answered so far, from the tasks that wait for them.
final class AnswerCount: Sendable {
    let count = Mutex(0)
}
