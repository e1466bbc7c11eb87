import Foundation
import FluxBusProtocol
import FluxBusTools
import Testing

@testable import FluxBus

/// The small parts behind `--metrics-listen`, STATUS's figures and `top`: parsing, the HTTP rule, the window.
@Suite("Metrics parts")
struct MetricsPartsTests {
    @Test(arguments: [("127.0.0.1:9464", true), ("0.0.0.0:0", false), ("10.1.2.3:65535", false), ("127.9.9.9:1", true)])
    func aListenAddressParsesAndKnowsWhetherItIsLoopback(_ text: String, _ loopback: Bool) throws {
        let endpoint = try MetricsEndpoint(parsing: text)
        #expect(endpoint.description == text)
        #expect(endpoint.isLoopback == loopback)
        #expect((endpoint.exposureWarning == nil) == loopback)
        #expect(endpoint.exposureWarning?.contains("served beyond this machine at \(text)") ?? true)
    }

    @Test(arguments: ["", "9464", "localhost:9464", "127.0.0.1:", "127.0.0.1:65536", "1.2.3:80", "256.0.0.1:80", "[::1]:80"])
    func aBadListenAddressIsRefusedNamingIt(_ text: String) {
        #expect {
            try MetricsEndpoint(parsing: text)
        } throws: { error in
            let error = error as? BusError
            return error?.code == .usage && error?.message.contains("--metrics-listen '\(text)'") == true
        }
    }

    @Test func onlyGETSlashMetricsGetsTheMetrics() {
        func status(_ head: String) -> String {
            HTTPAnswer.to(requestHead: Array(head.utf8), metrics: { Array("m 1\n".utf8) }).status
        }
        #expect(status("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n") == "200 OK")
        #expect(status("GET /metrics?name[]=x HTTP/1.0\r\n\r\n") == "200 OK")
        #expect(status("GET / HTTP/1.1\r\n\r\n") == "404 Not Found")
        #expect(status("HEAD /metrics HTTP/1.1\r\n\r\n") == "405 Method Not Allowed")
        #expect(status("GET /metrics\r\n\r\n") == "400 Bad Request")
        let answer = HTTPAnswer.to(requestHead: Array("GET /metrics HTTP/1.1\r\n\r\n".utf8), metrics: { Array("m 1\n".utf8) })
        #expect(String(decoding: answer.encoded(), as: UTF8.self) == "HTTP/1.1 200 OK\r\nContent-Type: \(HTTPAnswer.exposition)\r\n"
            + "Content-Length: 4\r\nConnection: close\r\n\r\nm 1\n")
    }

    @Test func theWindowGivesPercentilesOfTheLatestAndRatesOverItsCounts() {
        let start = MonotonicTime(nanoseconds: 1_000_000_000)
        var window = DispatchWindow(now: start)
        #expect(window.figures(at: start) == DispatchFigures())
        for micros in 1...100 { window.actionCompleted(micros: UInt64(micros)) }
        for _ in 0..<50 { window.dispatchAnswered() }
        let later = start.advanced(by: .seconds(2))
        window.tick(at: later)
        let figures = window.figures(at: later)
        #expect(figures.actionsTotal == 100 && figures.dispatchesTotal == 50)
        #expect(figures.latencySamples == 100)
        #expect([figures.latencyP50Micros, figures.latencyP90Micros, figures.latencyP99Micros, figures.latencyMaxMicros] == [50, 90, 99, 100])
        #expect(figures.actionRateMilli == 50_000 && figures.dispatchRateMilli == 25_000)
        // Only the latest 1,024 latencies count.
        for _ in 0..<DispatchWindow.latencyCapacity { window.actionCompleted(micros: 7) }
        #expect(window.figures(at: later).latencyMaxMicros == 7)
    }

    @Test func busFiguresNameTheSlowestReplicaAndTheWorkersWhoseDigestsDiffer() {
        let status = Message.Status(
            requestID: "", epoch: 1, sequence: 10, queueLength: 0, publishEndpoint: "",
            workers: [
                .init(id: "w1", state: .live, stores: ["kv"], lastApplied: 10, heartbeatAgeMillis: 0),
                .init(id: "w2", state: .live, stores: ["kv"], lastApplied: 7, heartbeatAgeMillis: 0),
                .init(id: "w3", state: .lost, stores: ["kv"], lastApplied: 1, heartbeatAgeMillis: 0),
            ],
            stores: [.init(name: "kv", dependsOn: [], handlesAll: true, handles: [], waitingFor: [], divergedAt: 0,
                           replicas: [.init(worker: "w1", lastApplied: 7, digest: 1), .init(worker: "w2", lastApplied: 7, digest: 2),
                                      .init(worker: "w3", lastApplied: 1, digest: 3)])],
            figures: .init(dispatchesTotal: 9, actionsTotal: 10, dispatchRateMilli: 1500, actionRateMilli: 0, latencySamples: 1,
                           latencyP50Micros: 999, latencyP90Micros: 1000, latencyP99Micros: 1049, latencyMaxMicros: 2_500_000))
        let figures = BusFigures(status)
        #expect(figures.slowestText == "w2 (lag 3)")
        #expect(figures.disagreements == ["w1": ["kv"], "w2": ["kv"]])
        #expect(figures.ratesText == "1.5/s dispatches, 0.0/s actions")
        #expect(figures.latencyText == "p50 999 µs  p90 1.0 ms  p99 1.0 ms  max 2.5 s")
        #expect(StatusView.text(status).contains("rates 1.5/s dispatches, 0.0/s actions   latency p50 999 µs"))
        #expect(StatusView.json(status).figures.slowestWorker == "w2")
        #expect(TopView.line(status, at: Date(timeIntervalSince1970: 3723)).hasPrefix("01:02:03 seq 10 queue 0"))
    }
}
