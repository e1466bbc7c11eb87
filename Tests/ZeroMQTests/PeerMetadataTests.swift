import Testing
import ZeroMQ

/// What a ROUTER learns about who sent a message, and what ROUTER_HANDOVER does to the connection it takes an id from:
/// the two facts FluxBus's rule "one worker id, one process" rests on (docs/PROTOCOL.md, Joins).
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

    /// With ROUTER_HANDOVER, a second connection under a routing id in use cuts the first off: what the first sends
    /// afterwards never arrives. So two processes must not share a routing id, and a worker's is its id and instance.
    @Test func handoverCutsOffTheConnectionItTookTheIDFrom() async throws {
        let (fromFirstAfter, fromSecond) = try await onDedicatedThread {
            let context = try ZMQContext()
            let router = try ZMQSocket(.router, context: context)
            try router.set(.routerHandover, to: true)
            try router.bind("tcp://127.0.0.1:*")
            let endpoint = try router.lastEndpoint
            let first = try ZMQSocket(.dealer, context: context)
            try first.set(.routingID, to: bytes("w1"))
            try first.connect(endpoint)
            try first.send(bytes("first"))
            _ = try router.receive(timeout: patience)

            let second = try ZMQSocket(.dealer, context: context)
            try second.set(.routingID, to: bytes("w1"))
            try second.connect(endpoint)
            try second.send(bytes("second"))
            let fromSecond = strings(try router.receive(timeout: patience))
            try first.send(bytes("first, after the handover"))
            let fromFirstAfter = strings(try router.receive(timeout: .seconds(1)))
            return (fromFirstAfter, fromSecond)
        }
        #expect(fromSecond == ["w1", "second"])
        #expect(fromFirstAfter == nil)
    }
}
