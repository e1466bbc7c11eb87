import Foundation
import FluxBus
import FluxBusProtocol
import FluxBusTools
import Testing
import ZeroMQ

/// Prometheus's view: a live coordinator and worker scraped over HTTP while real dispatches go through them.
@Suite("Metrics over HTTP", .timeLimit(.minutes(1)))
struct MetricsTests {
    @Test func countersAndHistogramsMoveWithRealDispatches() async throws {
        let cluster = try Cluster()
        try cluster.startCoordinator(["--metrics-listen", "127.0.0.1:0"])
        try cluster.startWorker("w1", stores: ["counter=counter"], extra: ["--metrics-listen", "127.0.0.1:0"])
        let client = try await cluster.client()
        try await cluster.waitUntilLive(1, client: client)
        let coordinatorPort = try await cluster.metricsPort(of: "coordinator")
        let workerPort = try await cluster.metricsPort(of: "w1")

        let before = try Cluster.scrape(port: coordinatorPort)
        let workerBefore = try Cluster.scrape(port: workerPort)
        let dispatched = 5
        for _ in 0..<dispatched { #expect(try await client.dispatch("counter.add", json: #"{"by":1}"#).succeeded) }
        _ = try await client.dispatch("nobody.handles.this", json: "{}")

        // Counted before the answers left, so the first scrape after them sees them all.
        let after = try Cluster.scrape(port: coordinatorPort)
        #expect(after["fluxbus_dispatches_total"] == (before["fluxbus_dispatches_total"] ?? 0) + Double(dispatched + 1))
        #expect(after[#"fluxbus_actions_total{outcome="ok"}"#] == (before[#"fluxbus_actions_total{outcome="ok"}"#] ?? 0) + Double(dispatched))
        #expect(after[#"fluxbus_actions_total{outcome="unhandled"}"#] == (before[#"fluxbus_actions_total{outcome="unhandled"}"#] ?? 0) + 1)
        let okCount = #"fluxbus_dispatch_duration_seconds_count{outcome="ok"}"#
        #expect(after[okCount] == (before[okCount] ?? 0) + Double(dispatched))
        #expect((after[#"fluxbus_dispatch_duration_seconds_sum{outcome="ok"}"#] ?? 0) > 0)
        #expect((after[#"fluxbus_log_sync_duration_seconds_count{step="commit"}"#] ?? 0) > 0)
        // `--sync always` (the default): each lock-step dispatch's commit is fsynced after its ACTION went out.
        let syncs = #"fluxbus_log_sync_duration_seconds_count{step="sync"}"#
        #expect((after[syncs] ?? 0) >= (before[syncs] ?? 0) + Double(dispatched))

        // Gauges are sampled once a second: wait for the sample that sees the last dispatch.
        let sequence = Double(try await client.status().sequence)
        let sampled = try await Cluster.scrape(port: coordinatorPort) { $0["fluxbus_log_last_sequence"] == sequence }
        #expect(sampled[#"fluxbus_workers{state="live"}"#] == 1)
        #expect(sampled[#"fluxbus_replica_lag_sequences{store="counter",worker="w1"}"#] == 0)
        #expect(sampled["fluxbus_queue_depth"] == 0)
        #expect(sampled["fluxbus_diverged_stores"] == 0)
        #expect(sampled["fluxbus_malformed_messages_total"] == 0)
        #expect((sampled["fluxbus_log_size_bytes"] ?? 0) > 0)

        let handled = #"fluxbus_handler_duration_seconds_count{store="counter"}"#
        let applied = #"fluxbus_store_dispatches_total{store="counter",outcome="ok"}"#
        let worker = try await Cluster.scrape(port: workerPort) {
            $0[applied] == (workerBefore[applied] ?? 0) + Double(dispatched) && $0["fluxbus_worker_last_applied_sequence"] == sequence
        }
        #expect(worker[handled] == (workerBefore[handled] ?? 0) + Double(dispatched))
        #expect(worker[#"fluxbus_worker_phase{phase="live"}"#] == 1)

        // The coordinator's STATUS carries the same totals for `status` and `top`.
        let figures = try await client.status().figures
        #expect(figures.dispatchesTotal == UInt64(after["fluxbus_dispatches_total"] ?? -1))
        #expect(figures.latencySamples >= UInt32(dispatched))
        #expect(figures.latencyP50Micros <= figures.latencyP99Micros && figures.latencyP99Micros <= figures.latencyMaxMicros)
        await client.close()
        await cluster.stop()
    }

    @Test func aMalformedMessageIsCounted() async throws {
        let cluster = try Cluster()
        try cluster.startCoordinator(["--metrics-listen", "127.0.0.1:0"])
        let port = try await cluster.metricsPort(of: "coordinator")
        // The page is served before the engine's metrics exist: wait for them.
        let before = try await Cluster.scrape(port: port) { $0["fluxbus_malformed_messages_total"] != nil }
        #expect(before["fluxbus_malformed_messages_total"] == 0)
        let context = try ZMQContext()
        let endpoint = cluster.control
        try await Task.detached {
            let dealer = try ZMQSocket(.dealer, context: context)
            defer { dealer.close() }
            try dealer.set(.linger, to: .milliseconds(500))
            try dealer.connect(endpoint)
            // The right signature, then a body no command starts with.
            _ = try dealer.send([[0x46, 0x4C, 0x58, 0x42, 0x02], [0xEE, 0x01, 0x02]])
        }.value
        // Counters are read off the engine once a second.
        let after = try await Cluster.scrape(port: port) { ($0["fluxbus_malformed_messages_total"] ?? 0) >= 1 }
        #expect(after["fluxbus_malformed_messages_total"] == 1)
        context.shutdown()
        await cluster.stop()
    }

    @Test func onlyGETSlashMetricsIsServed() async throws {
        let cluster = try Cluster()
        try cluster.startCoordinator(["--metrics-listen", "127.0.0.1:0"])
        let port = try await cluster.metricsPort(of: "coordinator")
        #expect(try Cluster.http(port: port, "GET /other HTTP/1.1\r\n\r\n").hasPrefix("HTTP/1.1 404"))
        #expect(try Cluster.http(port: port, "POST /metrics HTTP/1.1\r\n\r\n").hasPrefix("HTTP/1.1 405"))
        #expect(try Cluster.http(port: port, "nonsense\r\n\r\n").hasPrefix("HTTP/1.1 400"))
        let huge = "GET /metrics HTTP/1.1\r\nX-Padding: " + String(repeating: "a", count: 10_000) + "\r\n\r\n"
        #expect(try Cluster.http(port: port, huge).hasPrefix("HTTP/1.1 431"))
        // Still serving after all that, a query string ignored.
        #expect(try Cluster.http(port: port, "GET /metrics?x=1 HTTP/1.1\r\n\r\n").hasPrefix("HTTP/1.1 200 OK"))
        await cluster.stop()
    }

    @Test func aMetricsPortInUseStopsTheProcessNamingIt() async throws {
        let cluster = try Cluster()
        try cluster.startCoordinator(["--metrics-listen", "127.0.0.1:0"])
        let port = try await cluster.metricsPort(of: "coordinator")
        let run = try CommandLineTests.fluxbus([
            "worker", "--id", "w1", "--store", "counter=counter", "--coordinator", cluster.control,
            "--metrics-listen", "127.0.0.1:\(port)",
        ])
        #expect(run.status == 2)
        #expect(run.error.contains("--metrics-listen 127.0.0.1:\(port): cannot bind"), "\(run.error)")
        // It stopped before joining: the coordinator never heard of it.
        let client = try await cluster.client()
        #expect(try await client.status().workers.isEmpty)
        await client.close()
        await cluster.stop()
    }

    @Test(arguments: ["localhost:9464", "127.0.0.1", "127.0.0.1:99999", ":9464"])
    func aBadListenAddressIsAUsageErrorNamingIt(_ value: String) throws {
        let run = try CommandLineTests.fluxbus(["coordinator", "--in-memory", "--metrics-listen", value])
        #expect(run.status == 2)
        #expect(run.error.contains("--metrics-listen '\(value)'"), "\(run.error)")
        #expect(run.error.contains("for example 127.0.0.1:9464"), "\(run.error)")
    }
}
