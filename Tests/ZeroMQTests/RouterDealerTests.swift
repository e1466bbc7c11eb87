import Testing
import ZeroMQ

@Suite(.timeLimit(.minutes(1)))
struct RouterDealerTests {
    @Test func routerAddressesDealersByRoutingID() async throws {
        let (arrivals, replies) = try await onDedicatedThread {
            let context = try ZMQContext()
            let router = try ZMQSocket(.router, context: context)
            try router.set(.routerMandatory, to: true)
            try router.bind("tcp://127.0.0.1:*")
            let endpoint = try router.lastEndpoint
            var dealers: [ZMQSocket] = []
            for id in ["w1", "w2"] {
                let dealer = try ZMQSocket(.dealer, context: context)
                try dealer.set(.routingID, to: bytes(id))
                try dealer.connect(endpoint)
                try dealer.send(bytes("hello from \(id)"))
                dealers.append(dealer)
            }
            var arrivals: [[String]] = []
            for _ in 0..<2 { arrivals.append(strings(try router.receive(timeout: patience)) ?? []) }
            for id in ["w2", "w1"] { try router.send([bytes(id), bytes("for \(id)")]) }
            let replies = try dealers.map { strings(try $0.receive(timeout: patience)) ?? [] }
            return (arrivals, replies)
        }
        #expect(Set(arrivals) == [["w1", "hello from w1"], ["w2", "hello from w2"]])
        #expect(replies == [["for w1"], ["for w2"]])
    }

    /// With ROUTER_HANDOVER, a second DEALER presenting an id already in use takes it over: replies to that id go
    /// to the newcomer, and the first one hears nothing more, nor is heard (a restarted worker keeps its identity).
    @Test func handoverGivesTheRoutingIDToTheNewestConnection() async throws {
        let (fromFirst, fromSecond, toSecond, toFirst, fromFirstAfter) = try await onDedicatedThread {
            let context = try ZMQContext()
            let router = try ZMQSocket(.router, context: context)
            try router.set(.routerHandover, to: true)
            try router.bind("tcp://127.0.0.1:*")
            let endpoint = try router.lastEndpoint

            let first = try ZMQSocket(.dealer, context: context)
            try first.set(.routingID, to: bytes("worker"))
            try first.connect(endpoint)
            try first.send(bytes("first"))
            let fromFirst = strings(try router.receive(timeout: patience))

            let second = try ZMQSocket(.dealer, context: context)
            try second.set(.routingID, to: bytes("worker"))
            try second.connect(endpoint)
            try second.send(bytes("second"))
            let fromSecond = strings(try router.receive(timeout: patience))

            try router.send([bytes("worker"), bytes("reply")])
            let toSecond = strings(try second.receive(timeout: patience))
            let toFirst = strings(try first.receive(timeout: quietPeriod))
            try first.send(bytes("first, after the handover"))
            let fromFirstAfter = strings(try router.receive(timeout: quietPeriod))
            return (fromFirst, fromSecond, toSecond, toFirst, fromFirstAfter)
        }
        #expect(fromFirst == ["worker", "first"])
        #expect(fromSecond == ["worker", "second"])
        #expect(toSecond == ["reply"])
        #expect(toFirst == nil)
        // Nor does the router hear the first one again: two live processes must not share a routing id, so a
        // worker's is its id and its instance (docs/PROTOCOL.md, "Routing ids on the ROUTER").
        #expect(fromFirstAfter == nil)
    }

    @Test func mandatoryRoutingToAnUnknownPeerThrowsHostUnreachable() async throws {
        let (error, silentSend) = try await onDedicatedThread {
            let context = try ZMQContext()
            let strict = try ZMQSocket(.router, context: context)
            try strict.set(.routerMandatory, to: true)
            try strict.bind(uniqueInprocEndpoint())
            let error = try #require(throws: ZMQError.self) { try strict.send([bytes("nobody"), bytes("hello")]) }

            let lenient = try ZMQSocket(.router, context: context)
            try lenient.bind(uniqueInprocEndpoint())
            return (error, try lenient.send([bytes("nobody"), bytes("hello")]))
        }
        #expect(error.isHostUnreachable)
        #expect(error.code == .hostUnreachable)
        #expect(error.operation == "send frame 1/2 on ROUTER socket")
        #expect(error.description.contains("no peer has this routing id"))
        #expect(silentSend) // without ROUTER_MANDATORY the message is dropped silently
    }
}
