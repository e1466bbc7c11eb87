import Flux

/// A store for a ``Worker`` to host: a store type, optionally under another name, with other dependencies, or
/// limited to some of its action types. The same store type runs unchanged under an in-process `Hub` (in Flux).
///
/// ```swift
/// let stores = [HostedStore(CountryStore.self), HostedStore(CounterStore.self, name: "hits")]
/// ```
public struct HostedStore: Sendable {
    public let type: any Store.Type
    public let name: String?
    public let dependencies: [String]?
    public let handles: [String]?

    /// Hosts a store type, by default under its own name and with its own dependencies.
    public init(_ type: any Store.Type, name: String? = nil, dependencies: [String]? = nil, handles: [String]? = nil) {
        self.type = type
        self.name = name
        self.dependencies = dependencies
        self.handles = handles
    }

    /// The name it will have on the bus.
    public var effectiveName: String { name ?? type.name }

    func makeStore() -> AnyStore {
        AnyStore(type, name: name, dependencies: dependencies, limitedTo: handles)
    }
}
