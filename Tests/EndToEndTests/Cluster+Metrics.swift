import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Scraping the processes' `GET /metrics` over real HTTP on 127.0.0.1, as Prometheus does.
extension Cluster {
    /// The metrics port a process logged (`metrics=http://127.0.0.1:PORT/metrics`), once it has.
    func metricsPort(of name: String, within limit: Duration = .seconds(20)) async throws -> UInt16 {
        let deadline = ContinuousClock.now.advanced(by: limit)
        while ContinuousClock.now < deadline {
            let log = self.log(name)
            if let range = log.range(of: "metrics=http://127.0.0.1:"),
                let port = UInt16(log[range.upperBound...].prefix { $0.isNumber })
            {
                return port
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw ClusterError("\(name) never said where it serves metrics\n" + allLogs())
    }

    /// Sends `request` to 127.0.0.1:`port` and returns the whole answer (the server closes after one).
    static func http(port: UInt16, _ request: String) throws -> String {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw ClusterError("socket: \(errno)") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        inet_pton(AF_INET, "127.0.0.1", &address.sin_addr)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw ClusterError("cannot connect to 127.0.0.1:\(port): \(errno)") }
        let bytes = Array(request.utf8)
        guard bytes.withUnsafeBytes({ send(fd, $0.baseAddress, $0.count, 0) }) == bytes.count else {
            throw ClusterError("cannot send to 127.0.0.1:\(port)")
        }
        var answer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { break }
            answer += chunk[..<count]
        }
        return String(decoding: answer, as: UTF8.self)
    }

    /// `GET /metrics`: the exposition's samples by name with labels, as written (`name{label="v"}` → value).
    static func scrape(port: UInt16) throws -> [String: Double] {
        let answer = try http(port: port, "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        guard answer.hasPrefix("HTTP/1.1 200 OK") else { throw ClusterError("scrape failed:\n\(answer)") }
        var samples: [String: Double] = [:]
        for line in answer.split(separator: "\n") where !line.hasPrefix("#") {
            guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else { continue }
            samples[String(line[..<space])] = value
        }
        return samples
    }

    /// Scrapes until `done` holds of the samples, or fails after `limit` with the last ones.
    static func scrape(port: UInt16, within limit: Duration = .seconds(10), until done: ([String: Double]) -> Bool) async throws
        -> [String: Double]
    {
        let deadline = ContinuousClock.now.advanced(by: limit)
        var samples = try scrape(port: port)
        while !done(samples) {
            guard ContinuousClock.now < deadline else { throw ClusterError("the metrics never got there:\n\(samples)") }
            try await Task.sleep(for: .milliseconds(50))
            samples = try scrape(port: port)
        }
        return samples
    }
}
