import Flux
import FluxStores

/// The store kinds a worker can host with no code: `fluxbus worker --store NAME=KIND`.
public enum StoreKind {
    /// Each kind's name and store type.
    public static let builtIn: [(name: String, type: any Store.Type)] = [
        ("kv", KVStore.self),
        ("counter", CounterStore.self),
        ("country", CountryStore.self),
        ("city", CityStore.self),
        ("price", PriceStore.self),
        ("sleep", SleepStore.self),
        ("crash", CrashStore.self),
    ]

    /// The store type of a built-in kind, or nil.
    public static func type(named kind: String) -> (any Store.Type)? {
        builtIn.first { $0.name == kind }?.type
    }
}
