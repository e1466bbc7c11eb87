import Testing
import ZeroMQ

/// What a ROUTER learns about who sent a message: the address a refusal of a duplicate worker id names
/// (docs/PROTOCOL.md, Joins).
@Suite(.timeLimit(.minutes(1)))
struct PeerMetadataTests {
    /// Over tcp:// a message carries its sender's IP address (`Peer-Address`); over inproc:// there is none.
    @Test func aMessageCarriesItsPeersAddressOverTCPAndNoneOverInproc() async throws {
        let (tcp, inproc) = try await onDedicatedThread {
            let context = try ZMQContext()
            var addresses: [String?] = []
            for endpoint in ["tcp://127.0.0.1:*", uniqueInprocEndpoint()] {
                let router = try ZMQSocket(.router, context: context)
                try router.bind(endpoint)
                let dealer = try ZMQSocket(.dealer, context: context)
                try dealer.connect(try router.lastEndpoint)
                try dealer.send(bytes("hello"))
                var poller = ZMQPoller()
                _ = poller.add(router, events: .readable)
                _ = try poller.poll(timeout: patience)
                let received = try router.tryReceiveWithMetadata()
                #expect(received?.frames.last == bytes("hello"))
                addresses.append(received?.peerAddress)
            }
            return (addresses[0], addresses[1])
        }
        #expect(tcp == "127.0.0.1")
        #expect(inproc == nil)
    }
}
