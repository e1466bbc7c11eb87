import Flux

/// A replicated map from string keys to any JSON value.
public final class KVStore: Store {
    /// The payload of `kv.set`.
    public struct Set: Codable, Sendable, Hashable {
        public var key: String
        public var value: JSONValue
        public init(key: String, value: JSONValue) {
            self.key = key
            self.value = value
        }
    }

    /// The payload of `kv.delete`.
    public struct Delete: Codable, Sendable, Hashable {
        public var key: String
        public init(key: String) { self.key = key }
    }

    /// `kv.set {"key": K, "value": ANY}`.
    public static let set = ActionType<Set>("kv.set")
    /// `kv.delete {"key": K}`.
    public static let delete = ActionType<Delete>("kv.delete")

    public static let name = "kv"
    public static let handlers = Handlers<KVStore>()
        .on(set) { store, action, _ in store.state[action.payload.key] = action.payload.value }
        .on(delete) { store, action, _ in store.state[action.payload.key] = nil }

    /// The map itself is the state.
    public var state: [String: JSONValue] = [:]
    public init() {}
}
