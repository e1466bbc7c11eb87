import Testing
import ZeroMQ

@Suite(.timeLimit(.minutes(1)))
struct PubSubTests {
    /// Three subscribers, one of them filtering by topic, all get every matching message in order: the publisher
    /// (an XPUB) first waits until it has seen all three subscriptions, which is the slow-joiner remedy.
    @Test func fanOutReachesEverySubscriberOnceAllHaveSubscribed() async throws {
        let received = try await onDedicatedThread {
            let context = try ZMQContext()
            let publisher = try ZMQSocket(.xpub, context: context)
            try publisher.set(.xpubVerbose, to: true) // report every subscription, even repeated prefixes
            try publisher.bind("tcp://127.0.0.1:*")
            let endpoint = try publisher.lastEndpoint

            var subscribers: [ZMQSocket] = []
            for topic in ["", "", "orders."] {
                let subscriber = try ZMQSocket(.sub, context: context)
                try subscriber.subscribe(topic)
                try subscriber.connect(endpoint)
                subscribers.append(subscriber)
            }
            // An XPUB receives each subscription as a message: 0x01 followed by the prefix.
            var notices: [[UInt8]] = []
            while notices.count < 3, let notice = try publisher.receive(timeout: patience) {
                notices.append(notice[0])
            }
            #expect(notices.sorted { $0.count < $1.count } == [[1], [1], [1] + bytes("orders.")])

            for index in 0..<10 {
                let topic = index.isMultiple(of: 2) ? "orders." : "prices."
                try publisher.send([bytes(topic), bytes("\(index)")])
            }
            return try subscribers.map { subscriber in
                var bodies: [String] = []
                while let frames = try subscriber.receive(timeout: quietPeriod) { bodies.append(strings(frames)![1]) }
                return bodies
            }
        }
        let everything = (0..<10).map(String.init)
        #expect(received[0] == everything)
        #expect(received[1] == everything)
        #expect(received[2] == ["0", "2", "4", "6", "8"])
    }

    /// The slow joiner: `connect` returns before the connection exists, and a PUB drops whatever it publishes
    /// while it has no subscriber. Here the subscriber connects first (to an ipc path nobody serves yet, so it
    /// retries after its reconnect interval); the publisher then binds and publishes at once, and that message is
    /// gone. The remedy shown is to publish until the subscriber demonstrably receives, and only then send data.
    @Test func messagesPublishedBeforeTheSubscriptionArrivesAreLost() async throws {
        let (firstReceived, afterRemedy) = try await onDedicatedThread {
            let context = try ZMQContext()
            let endpoint = uniqueIPCEndpoint()
            defer { removeIPCFile(endpoint) }
            let subscriber = try ZMQSocket(.sub, context: context)
            try subscriber.set(.reconnectInterval, to: .milliseconds(500))
            try subscriber.subscribe()
            try subscriber.connect(endpoint) // refused for now: nothing is bound

            let publisher = try ZMQSocket(.pub, context: context)
            try publisher.bind(endpoint)
            try publisher.send([bytes("early")]) // no subscriber yet: dropped

            let first = try publishUntilReceived(publisher, subscriber, probe: [bytes("probe")])
            try publisher.send([bytes("data")])
            var rest: [String] = []
            while let frames = try subscriber.receive(timeout: quietPeriod) { rest.append(strings(frames)![0]) }
            return (strings(first), rest)
        }
        #expect(firstReceived == ["probe"])
        #expect(afterRemedy.last == "data")
        #expect(!afterRemedy.contains("early"))
    }

    @Test func unsubscribeStopsDelivery() async throws {
        let received = try await onDedicatedThread {
            let context = try ZMQContext()
            let endpoint = uniqueInprocEndpoint()
            let publisher = try ZMQSocket(.pub, context: context)
            try publisher.bind(endpoint)
            let subscriber = try ZMQSocket(.sub, context: context)
            try subscriber.subscribe("a")
            try subscriber.subscribe("b")
            try subscriber.connect(endpoint)
            _ = try publishUntilReceived(publisher, subscriber, probe: [bytes("a-probe")])
            try subscriber.unsubscribe("b")
            // The unsubscription travels to the publisher like the subscription did; probe again so it has landed.
            try publisher.send([bytes("b-early")])
            _ = try publishUntilReceived(publisher, subscriber, probe: [bytes("a-probe2")])
            try publisher.send([bytes("b-late")])
            try publisher.send([bytes("a-late")])
            var seen: [String] = []
            while let frames = try subscriber.receive(timeout: quietPeriod) { seen.append(strings(frames)![0]) }
            return seen
        }
        #expect(received.last == "a-late")
        #expect(!received.contains("b-late"))
    }
}
