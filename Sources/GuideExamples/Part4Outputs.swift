import Flux
import FluxBus
import FluxBusProtocol
import Foundation
import Logging
import ServiceLifecycle
import ZeroMQ

// Part 4 of docs/GUIDE.md: stores that publish an output, and stores that read it, in process and across workers.

// guide:begin fulfilment-actions
public enum Fulfilment {
    public struct Order: Codable, Sendable, Hashable {
        public var id: String
        public var sku: String
        public var quantity: Int
        /// In cents.
        public var unitPrice: Int
        /// A country code.
        public var destination: String
        public init(id: String, sku: String, quantity: Int, unitPrice: Int, destination: String) {
            self.id = id
            self.sku = sku
            self.quantity = quantity
            self.unitPrice = unitPrice
            self.destination = destination
        }
    }

    public static let place = ActionType<Order>("order.place")
}
// guide:end fulfilment-actions

// guide:begin warehouse-store
/// Stock in two warehouses. An order is allocated to the first warehouse that has all of it, and the
/// allocation is the store's output: what the stores waiting for it read.
public final class WarehouseStore: Store {
    public struct Allocation: Codable, Sendable, Hashable {
        public var order: String
        public var warehouse: String
        public var quantity: Int
    }

    public struct State: Codable, Sendable, Hashable {
        public var stock = ["berlin": ["apple": 10, "pear": 2], "lyon": ["apple": 4, "pear": 6]]
        public var lastAllocation: Allocation?
    }

    public static let name = "warehouse"
    public static let handlers = Handlers<WarehouseStore>()
        .on(Fulfilment.place) { store, action, _ in
            let order = action.payload
            let stock = store.state.stock
            guard let warehouse = stock.keys.sorted().first(where: { (stock[$0]?[order.sku] ?? 0) >= order.quantity })
            else { throw ActionError("no warehouse has \(order.quantity) of \(order.sku)") }
            store.state.stock[warehouse, default: [:]][order.sku, default: 0] -= order.quantity
            store.state.lastAllocation = Allocation(order: order.id, warehouse: warehouse, quantity: order.quantity)
        }

    public var state = State()
    public init() {}
    public func output() -> Allocation? { state.lastAllocation }
}
// guide:end warehouse-store

// guide:begin shipping-store
/// Books a shipment from the warehouse that the warehouse store picked, in the same dispatch.
public final class ShippingStore: Store {
    public struct Shipment: Codable, Sendable, Hashable {
        public var order: String
        public var from: String
        public var cost: Int
    }

    /// Cents, by warehouse and destination.
    static let rates = ["berlin": ["DE": 490, "FR": 990], "lyon": ["DE": 1190, "FR": 390]]

    public static let name = "shipping"
    public static let dependencies = [WarehouseStore.name]
    public static let handlers = Handlers<ShippingStore>()
        .on(Fulfilment.place) { store, action, context in
            guard let allocation = try context.output(of: WarehouseStore.name, as: WarehouseStore.Allocation.self)
            else { throw ActionError("the warehouse published no allocation") }
            guard let cost = rates[allocation.warehouse]?[action.payload.destination] else {
                throw ActionError("no rate from \(allocation.warehouse) to \(action.payload.destination)")
            }
            store.state.append(Shipment(order: allocation.order, from: allocation.warehouse, cost: cost))
        }

    public var state: [Shipment] = []
    public init() {}
    public func output() -> Shipment? { state.last }
}
// guide:end shipping-store

// guide:begin invoice-store
/// Bills goods and shipping. It reads the shipping store's output into a type of its own.
public final class InvoiceStore: Store {
    /// The part of a `ShippingStore.Shipment` that invoicing needs, decoded from the same JSON.
    struct Charge: Decodable {
        var cost: Int
    }

    public struct Invoice: Codable, Sendable, Hashable {
        public var order: String
        public var total: Int
    }

    public static let name = "invoice"
    public static let dependencies = [ShippingStore.name]
    public static let handlers = Handlers<InvoiceStore>()
        .on(Fulfilment.place) { store, action, context in
            guard let charge = try context.output(of: ShippingStore.name, as: Charge.self) else {
                throw ActionError("shipping published no charge")
            }
            let order = action.payload
            store.state.append(Invoice(order: order.id, total: order.quantity * order.unitPrice + charge.cost))
        }

    public var state: [Invoice] = []
    public init() {}
}
// guide:end invoice-store

/// What ``outputsExample(logger:)`` observed.
public struct OutputsExample: Sendable {
    public var reports: [DispatchReport]
    /// For each order on the bus: `store@worker status` in plan order.
    public var placements: [[String]]
    public var busStatuses: [[String]]
    public var busErrors: [[String?]]
    public var hubInvoices: [InvoiceStore.Invoice]
    public var busInvoices: [InvoiceStore.Invoice]
    public var hubShipments: [ShippingStore.Shipment]
    public var busShipments: [ShippingStore.Shipment]
    public var hubWarehouse: WarehouseStore.State
    public var busWarehouse: WarehouseStore.State
}

/// Four orders through the fulfilment chain, under a hub and on two workers.
public func outputsExample(logger: Logger) async throws -> OutputsExample {
    // guide:begin outputs-orders
    let orders = [
        Fulfilment.Order(id: "A-1", sku: "apple", quantity: 3, unitPrice: 120, destination: "FR"),  // from berlin
        Fulfilment.Order(id: "A-2", sku: "pear", quantity: 6, unitPrice: 80, destination: "FR"),    // from lyon
        Fulfilment.Order(id: "A-3", sku: "apple", quantity: 20, unitPrice: 120, destination: "DE"), // nowhere
        Fulfilment.Order(id: "A-4", sku: "pear", quantity: 1, unitPrice: 80, destination: "ES"),    // no rate
    ]
    // guide:end outputs-orders

    // guide:begin outputs-hub
    let hub = Hub()
    try hub.register([WarehouseStore.self, ShippingStore.self, InvoiceStore.self])
    let reports = try orders.map { try hub.dispatch(Action(Fulfilment.place, $0)) }
    // reports[0].description == "#1 order.place: warehouse ok, shipping ok, invoice ok"
    // reports[2].description == "#3 order.place: warehouse failed (no warehouse has 20 of apple), "
    //     + "shipping skipped (waits for `warehouse`, which failed), "
    //     + "invoice skipped (waits for `shipping`, which was skipped)"
    // hub.store(of: InvoiceStore.self)!.state ==
    //     [Invoice(order: "A-1", total: 1350), Invoice(order: "A-2", total: 870)]
    // guide:end outputs-hub

    // guide:begin outputs-bus
    let context = try ZMQContext()
    let control = "inproc://fulfilment-control"
    let coordinator = Coordinator(
        configuration: .init(controlEndpoint: control, publishEndpoint: "inproc://fulfilment-publish"),
        context: context, logger: logger)
    let stock = Worker(
        configuration: .init(id: "w-stock", coordinator: control, stores: [HostedStore(WarehouseStore.self)]),
        context: context, logger: logger)
    let billing = Worker(
        configuration: .init(id: "w-billing", coordinator: control, stores: [
            HostedStore(ShippingStore.self), HostedStore(InvoiceStore.self),
        ]),
        context: context, logger: logger)
    let services = ServiceGroup(services: [coordinator, stock, billing], logger: logger)
    let running = Task { try await services.run() }
    let client = try await BusClient(endpoint: control, context: context)
    try await client.waitUntilLive(["w-stock", "w-billing"])

    var results: [DispatchResult] = []
    for order in orders {
        results.append(try await client.dispatch(Action(Fulfilment.place, order)))
    }
    // results[0].outcomes.map { "\($0.store)@\($0.worker)" } ==
    //     ["warehouse@w-stock", "shipping@w-billing", "invoice@w-billing"]
    // results[2].stores.map(\.status) == [.failed, .skipped, .skipped]
    // results[3].stores.map(\.status) == [.ok, .failed, .skipped]
    // guide:end outputs-bus

    let placements = results.map { $0.outcomes.map { "\($0.store)@\($0.worker)" } }
    let statuses = results.map { $0.stores.map { "\($0.name) \($0.status)" } }
    let errors = results.map { $0.stores.map(\.error) }
    func state<T: Decodable>(of store: String, as type: T.Type) async throws -> T {
        try JSONDecoder().decode(T.self, from: Data(try await client.state(of: store).state))
    }
    let busInvoices = try await state(of: InvoiceStore.name, as: [InvoiceStore.Invoice].self)
    let busShipments = try await state(of: ShippingStore.name, as: [ShippingStore.Shipment].self)
    let busWarehouse = try await state(of: WarehouseStore.name, as: WarehouseStore.State.self)

    await client.close()
    await services.triggerGracefulShutdown()
    try await running.value
    context.shutdown()

    return OutputsExample(
        reports: reports, placements: placements, busStatuses: statuses, busErrors: errors,
        hubInvoices: hub.store(of: InvoiceStore.self)!.state, busInvoices: busInvoices,
        hubShipments: hub.store(of: ShippingStore.self)!.state, busShipments: busShipments,
        hubWarehouse: hub.store(of: WarehouseStore.self)!.state, busWarehouse: busWarehouse)
}
