import Flux
import FluxBus
import FluxBusProtocol
import Foundation
import GuideExamples
import Logging
import ServiceLifecycle
import Testing
import ZeroMQ

/// Parts 3, 4 and 5 of docs/GUIDE.md: coordinators and workers in this process over `inproc://`, and the guide's
/// worker executable as a process of its own.
@Suite("Guide, on the bus: the same stores on workers, outputs across workers, replicas", .timeLimit(.minutes(1)))
struct BusGuideTests {
    static func logger() -> Logger {
        var logger = Logger(label: "guide")
        logger.logLevel = ProcessInfo.processInfo.environment["FLUXBUS_TEST_LOG"].flatMap(Logger.Level.init(rawValue:)) ?? .critical
        return logger
    }

    @Test("part 3: the part 2 stores on a worker report and end exactly as under a hub")
    func sameStoresOnAWorker() async throws {
        let example = try await busExample(logger: Self.logger())
        #expect(example.onTheBus == example.inProcess)
        #expect(example.inProcess[2] == [
            "inventory failed: only 0 of pear in stock",
            "cart skipped: waits for `inventory`, which failed",
            "audit ok",
        ])
        #expect(example.busCart == example.hubCart)
        #expect(example.busCart.lines == ["apple": 2])
        #expect(example.busCart.declined == "card declined")
        #expect(example.busInventory == example.hubInventory)
        #expect(example.replicaWorker == "shop-1")
        #expect(example.replicaSequence == 4)
        #expect(example.digestMatches)
        #expect(example.batchFirst == 5 && example.batchCount == 3 && example.batchFailures == 0)
        #expect(example.pearsAfterBatch == 6)
    }

    @Test("part 3: a client program waits for the stores, retries under one request id, and reads typed state")
    func typedClient() async throws {
        let context = try ZMQContext()
        let control = "inproc://typed-client"
        let coordinator = Coordinator(
            configuration: .init(controlEndpoint: control, publishEndpoint: "inproc://typed-client-publish"),
            context: context, logger: Self.logger())
        let worker = Worker(
            configuration: .init(id: "shop-1", coordinator: control, stores: [
                HostedStore(InventoryStore.self), HostedStore(CartStore.self), HostedStore(AuditStore.self),
            ]),
            context: context, logger: Self.logger())
        let services = ServiceGroup(services: [coordinator, worker], logger: Self.logger())
        let running = Task { try await services.run() }
        let example = try await clientExample(endpoint: control, context: context)
        await services.triggerGracefulShutdown()
        try await running.value
        context.shutdown()
        #expect(example.repeatSequence == example.firstSequence)
        #expect(example.inventory == ["apple": 3])
        #expect(example.cartLines == ["apple": 2])
    }

    @Test("part 4: outputs cross workers as JSON, and reach a store on the same worker through the coordinator too")
    func outputs() async throws {
        let example = try await outputsExample(logger: Self.logger())
        #expect(example.reports[0].description == "#1 order.place: warehouse ok, shipping ok, invoice ok")
        #expect(example.reports[2].description == "#3 order.place: warehouse failed (no warehouse has 20 of apple), "
            + "shipping skipped (waits for `warehouse`, which failed), "
            + "invoice skipped (waits for `shipping`, which was skipped)")
        #expect(example.reports[3].description == "#4 order.place: warehouse ok, shipping failed (no rate from berlin to ES), "
            + "invoice skipped (waits for `shipping`, which failed)")
        #expect(example.hubInvoices.map(\.order) == ["A-1", "A-2"])
        #expect(example.hubInvoices.map(\.total) == [1350, 870])
        #expect(example.hubShipments.map(\.from) == ["berlin", "lyon"])

        #expect(example.placements[0] == ["warehouse@w-stock", "shipping@w-billing", "invoice@w-billing"])
        #expect(example.busStatuses == [
            ["warehouse ok", "shipping ok", "invoice ok"],
            ["warehouse ok", "shipping ok", "invoice ok"],
            ["warehouse failed", "shipping skipped", "invoice skipped"],
            ["warehouse ok", "shipping failed", "invoice skipped"],
        ])
        // The same messages as the hub's: the bus and the hub keep one failure contract.
        #expect(example.busErrors[2] == [
            "no warehouse has 20 of apple", "waits for `warehouse`, which failed", "waits for `shipping`, which was skipped",
        ])
        #expect(example.busErrors[3] == [nil, "no rate from berlin to ES", "waits for `shipping`, which failed"])
        #expect(example.busInvoices == example.hubInvoices)
        #expect(example.busShipments == example.hubShipments)
        #expect(example.busWarehouse == example.hubWarehouse)
        #expect(example.busWarehouse.stock == ["berlin": ["apple": 7, "pear": 1], "lyon": ["apple": 4, "pear": 0]])
    }

    @Test("part 5: replicas agree by digest, a random store diverges, a late replica catches up")
    func replicas() async throws {
        let example = try await replicasExample(logger: Self.logger())
        #expect(example.checkoutSequence == 3)
        #expect(example.checkoutStores == ["cart 2", "receipts 2", "receipts-random 2"])
        #expect(example.checkoutDigests["cart"]?.count == 1)
        #expect(example.checkoutDigests["receipts"]?.count == 1)
        #expect(example.checkoutDigests["receipts-random"]?.count == 2)
        #expect(example.divergedAt == ["inventory": 0, "cart": 0, "receipts": 0, "receipts-random": 3])
        #expect(example.lateReplicaSequence == 3)
        // A replica that only replayed reports its digests as it goes live, in the same message as READY.
        #expect(example.lateDigestsBeforeLiveDispatch.count == 3 && !example.lateDigestsBeforeLiveDispatch.contains(0),
                "\(example.lateDigestsBeforeLiveDispatch)")
        #expect(example.statusText.contains("DIVERGED at #3"), "\(example.statusText)")
        #expect(example.finalReplicas == [
            "inventory": ["shop-a@4", "shop-b@4", "shop-c@4"],
            "cart": ["shop-a@5", "shop-b@5", "shop-c@5"],
            "receipts": ["shop-a@5", "shop-b@5", "shop-c@5"],
        ])
        #expect(example.finalDigests.values.allSatisfy { $0.count == 1 && !$0.contains(0) }, "\(example.finalDigests)")
        #expect(example.receipts == ["R-3", "R-5"])
        #expect(example.stateDigestMatches)
    }
}
