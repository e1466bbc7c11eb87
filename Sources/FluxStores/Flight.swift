import Flux

/// The seeds' flight example from Flux's documentation: the city store waits for the country store, and the price
/// store waits for the city store.
public enum Flight {
    /// The payload of `country-update`.
    public struct CountryUpdate: Codable, Sendable, Hashable {
        public var country: String
        public init(country: String) { self.country = country }
    }

    /// The payload of `city-update`.
    public struct CityUpdate: Codable, Sendable, Hashable {
        public var city: String
        public init(city: String) { self.city = city }
    }

    /// `country-update {"country": C}`: sets the country; the city store then picks its default city.
    public static let countryUpdate = ActionType<CountryUpdate>("country-update")
    /// `city-update {"city": X}`: picks another city.
    public static let cityUpdate = ActionType<CityUpdate>("city-update")

    /// The city picked when a country is selected.
    public static let defaultCities: [String: String] = [
        "France": "Paris", "Germany": "Berlin", "Italy": "Rome", "Japan": "Tokyo", "Spain": "Madrid",
        "United Kingdom": "London", "United States": "New York",
    ]

    /// A deterministic fare for a destination, so every replica computes the same price.
    public static func price(country: String, city: String) -> Int {
        let weight = (country + "/" + city).unicodeScalars.reduce(0) { ($0 &* 31 &+ Int($1.value)) % 1_000_003 }
        return 120 + weight % 480
    }

    /// The three stores, in an order that satisfies their dependencies.
    public static let stores: [any Store.Type] = [CountryStore.self, CityStore.self, PriceStore.self]
}

/// Holds the selected country.
public final class CountryStore: Store {
    /// The selected country; also the store's output.
    public struct State: Codable, Sendable, Hashable {
        public var country: String?
        public init(country: String? = nil) { self.country = country }
    }

    public static let name = "country"
    public static let handlers = Handlers<CountryStore>()
        .on(Flight.countryUpdate) { store, action, _ in store.state.country = action.payload.country }

    public var state = State()
    public init() {}
    public func output() -> State? { state }
}

/// Holds the selected city. On a country update it waits for the country store and picks that country's default
/// city; it fails, and so skips the price store, for a country it has no default for.
public final class CityStore: Store {
    /// The selected country and city; also the store's output, which the price store reads.
    public struct State: Codable, Sendable, Hashable {
        public var country: String?
        public var city: String?
        public init(country: String? = nil, city: String? = nil) {
            self.country = country
            self.city = city
        }
    }

    public static let name = "city"
    public static let dependencies = [CountryStore.name]
    public static let handlers = Handlers<CityStore>()
        .on(Flight.countryUpdate) { store, _, context in
            guard let country = try context.output(of: CountryStore.name, as: CountryStore.State.self)?.country
            else { throw ActionError("the country store published no country") }
            guard let city = Flight.defaultCities[country] else {
                throw ActionError("no default city for country `\(country)`")
            }
            store.state = State(country: country, city: city)
        }
        .on(Flight.cityUpdate) { store, action, _ in store.state.city = action.payload.city }

    public var state = State()
    public init() {}
    public func output() -> State? { state }
}

/// Holds the flight price, computed from the country and city that the city store publishes.
public final class PriceStore: Store {
    /// The destination priced, and its price.
    public struct State: Codable, Sendable, Hashable {
        public var country: String?
        public var city: String?
        public var price: Int?
        public init(country: String? = nil, city: String? = nil, price: Int? = nil) {
            self.country = country
            self.city = city
            self.price = price
        }
    }

    public static let name = "price"
    public static let dependencies = [CityStore.name]
    public static let handlers = Handlers<PriceStore>()
        .on(Flight.countryUpdate) { store, _, context in try store.reprice(context) }
        .on(Flight.cityUpdate) { store, _, context in try store.reprice(context) }

    public var state = State()
    public init() {}

    private func reprice(_ context: DispatchContext) throws {
        let destination = try context.output(of: CityStore.name, as: CityStore.State.self)
        guard let country = destination?.country, let city = destination?.city else {
            throw ActionError("no destination to price: select a country first")
        }
        state = State(country: country, city: city, price: Flight.price(country: country, city: city))
    }
}
