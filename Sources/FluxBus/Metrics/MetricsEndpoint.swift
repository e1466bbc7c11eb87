/// Where a process serves `GET /metrics`: an IPv4 address and a TCP port, as `--metrics-listen 127.0.0.1:9464` gives.
///
/// Only numeric IPv4 addresses: the responder binds exactly what it is told, and names would need a resolver for no
/// gain. Port 0 lets the kernel choose; the process logs the port it got.
public struct MetricsEndpoint: Sendable, Hashable, CustomStringConvertible {
    /// The address to bind, such as `127.0.0.1` or `0.0.0.0`.
    public let host: String
    /// The TCP port; 0 asks the kernel for a free one.
    public let port: UInt16

    /// Parses `HOST:PORT`.
    /// - Throws: `BusError` (`usage`) naming the text and saying what form is expected.
    public init(parsing text: String) throws {
        func refuse(_ why: String) -> BusError {
            BusError(code: .usage, message: "--metrics-listen '\(text)': \(why). "
                + "Give an IPv4 address and a port, for example 127.0.0.1:9464 (or 0.0.0.0:9464 to be scraped from other machines)")
        }
        guard let colon = text.lastIndex(of: ":") else { throw refuse("no port") }
        let host = String(text[..<colon])
        let portText = text[text.index(after: colon)...]
        guard !host.isEmpty else { throw refuse("no address before the port") }
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4, parts.allSatisfy({ !$0.isEmpty && $0.count <= 3 && UInt8($0) != nil }) else {
            throw refuse("'\(host)' is not an IPv4 address")
        }
        guard let port = UInt16(portText) else { throw refuse("'\(portText)' is not a port from 0 to 65535") }
        self.host = host
        self.port = port
    }

    /// An endpoint from its parts, already checked.
    init(host: String, port: UInt16) {
        self.host = host
        self.port = port
    }

    /// Whether only this machine can connect: 127.0.0.0/8.
    public var isLoopback: Bool { host.hasPrefix("127.") }

    /// What to warn about when other machines can connect, or nil for a loopback address.
    var exposureWarning: String? {
        isLoopback ? nil : "metrics are served beyond this machine at \(self): anyone who reaches the port reads the "
            + "bus's figures, worker ids and store names; bind 127.0.0.1 unless a firewall guards it"
    }

    public var description: String { "\(host):\(port)" }
}
