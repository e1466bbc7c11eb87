/// One HTTP/1.1 answer of ``MetricsServer``, and the rule that picks it from a request's head.
struct HTTPAnswer: Equatable {
    var status: String
    var contentType = "text/plain; charset=utf-8"
    var extraHeaders: [String] = []
    var body: [UInt8]

    init(status: String, contentType: String = "text/plain; charset=utf-8", extraHeaders: [String] = [], body: [UInt8]) {
        self.status = status
        self.contentType = contentType
        self.extraHeaders = extraHeaders
        self.body = body
    }

    init(status: String, body: String) { self.init(status: status, body: Array(body.utf8)) }

    /// Prometheus's text format, version 0.0.4.
    static let exposition = "text/plain; version=0.0.4; charset=utf-8"

    /// `GET /metrics` (a query string is ignored) gets the metrics; another path 404; another method 405; a request
    /// line that is not HTTP 400.
    static func to(requestHead: [UInt8], metrics: () -> [UInt8]) -> HTTPAnswer {
        let line = requestHead.split(separator: 13, maxSplits: 1, omittingEmptySubsequences: false).first ?? []
        let parts = line.split(separator: 32)
        guard parts.count == 3, parts[2].starts(with: Array("HTTP/1.".utf8)) else {
            return HTTPAnswer(status: "400 Bad Request", body: "expected a request line such as GET /metrics HTTP/1.1\n")
        }
        let path = parts[1].split(separator: UInt8(ascii: "?"), maxSplits: 1, omittingEmptySubsequences: false).first ?? []
        guard Array(path) == Array("/metrics".utf8) else {
            return HTTPAnswer(status: "404 Not Found", body: "only /metrics is served here\n")
        }
        guard Array(parts[0]) == Array("GET".utf8) else {
            return HTTPAnswer(status: "405 Method Not Allowed", extraHeaders: ["Allow: GET"], body: Array("only GET is served\n".utf8))
        }
        return HTTPAnswer(status: "200 OK", contentType: exposition, body: metrics())
    }

    /// The status line, headers and body; every connection closes after one answer.
    func encoded() -> [UInt8] {
        let head = (["HTTP/1.1 \(status)", "Content-Type: \(contentType)", "Content-Length: \(body.count)", "Connection: close"]
            + extraHeaders).joined(separator: "\r\n") + "\r\n\r\n"
        return Array(head.utf8) + body
    }
}
