import FluxStores
import Testing

@testable import Flux

/// The seeds' flight example, in both of its forms.
@Suite("Flight example")
struct FlightExampleTests {
    /// Flux's documentation form: one dispatcher, callbacks that call `waitFor` themselves.
    @Test func withWaitForInsideCallbacks() throws {
        enum FlightAction { case countryUpdate(String), cityUpdate(String) }
        let dispatcher = Dispatcher<FlightAction>()
        var country: String?
        var city: String?
        var price: Int?
        var order: [String] = []

        var countryToken: DispatchToken!
        var cityToken: DispatchToken!
        // Registered in reverse of their dependencies, so only waitFor can get the order right.
        dispatcher.register { action in
            switch action {
            case .countryUpdate, .cityUpdate:
                try dispatcher.waitFor([cityToken])
                price = Flight.price(country: country!, city: city!)
                order.append("price")
            }
        }
        cityToken = dispatcher.register { action in
            switch action {
            case .countryUpdate:
                try dispatcher.waitFor([countryToken])
                city = Flight.defaultCities[country!]
                order.append("city")
            case .cityUpdate(let newCity):
                city = newCity
                order.append("city")
            }
        }
        countryToken = dispatcher.register { action in
            if case .countryUpdate(let newCountry) = action {
                country = newCountry
                order.append("country")
            }
        }

        try dispatcher.dispatch(.countryUpdate("Japan"))
        #expect(order == ["country", "city", "price"])
        #expect(city == "Tokyo")
        #expect(price == Flight.price(country: "Japan", city: "Tokyo"))

        order = []
        try dispatcher.dispatch(.cityUpdate("Osaka"))
        #expect(order == ["city", "price"])
        #expect(price == Flight.price(country: "Japan", city: "Osaka"))
    }

    /// The FluxBus form: dependencies declared up front, outputs read through the context.
    @Test func withDependenciesDeclaredUpFront() throws {
        let hub = Hub()
        // Registered dependents first in one batch: the graph, not the registration order, decides.
        try hub.register([PriceStore.self, CityStore.self, CountryStore.self])
        #expect(hub.graph.order == ["country", "city", "price"])

        let report = try hub.dispatch(Action(Flight.countryUpdate, .init(country: "France")))
        #expect(report.outcomes.map(\.store) == ["country", "city", "price"])
        #expect(report.succeeded)
        #expect(hub.store(of: CityStore.self)?.state.city == "Paris")
        #expect(hub.store(of: PriceStore.self)?.state.price == Flight.price(country: "France", city: "Paris"))

        let cityReport = try hub.dispatch(Action(Flight.cityUpdate, .init(city: "Lyon")))
        #expect(cityReport.outcomes.map(\.store) == ["city", "price"])
        #expect(hub.store(of: PriceStore.self)?.state == .init(
            country: "France", city: "Lyon", price: Flight.price(country: "France", city: "Lyon")))
        #expect(hub.store(of: CountryStore.self)?.state.country == "France")
    }

    @Test func aFailingCitySkipsThePriceAndTheNextActionIsClean() throws {
        let hub = Hub()
        try hub.register(Flight.stores)
        try hub.dispatch(Action(Flight.countryUpdate, .init(country: "Spain")))
        let report = try hub.dispatch(Action(Flight.countryUpdate, .init(country: "Atlantis")))
        #expect(report["country"] == .ok)
        #expect(report["city"] == .failed("no default city for country `Atlantis`"))
        #expect(report["price"] == .skipped("waits for `city`, which failed"))
        // The price still describes the last destination that was priced.
        #expect(hub.store(of: PriceStore.self)?.state.city == "Madrid")

        let next = try hub.dispatch(Action(Flight.countryUpdate, .init(country: "Italy")))
        #expect(next.succeeded)
        #expect(hub.store(of: PriceStore.self)?.state.city == "Rome")
    }
}
