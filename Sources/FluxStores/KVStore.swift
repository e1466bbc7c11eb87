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

    /// The map itself is the state; it keeps its digest as it changes.
    public var state = KVState()
    public init() {}
}

// `kv.set` and `kv.delete` are the bus's commonest actions: read them without `JSONDecoder`. A `kv.set` is also
// written without `JSONEncoder`, which could not write every number exactly (see `JSONValue.encode(to:)`).
extension KVStore.Set: JSONReadable, JSONWritable {
    public func writeJSON(into bytes: inout [UInt8]) {
        bytes.append(contentsOf: #"{"key":"#.utf8)
        CanonicalJSON.write(key, into: &bytes)
        bytes.append(contentsOf: #","value":"#.utf8)
        CanonicalJSON.write(value, into: &bytes)
        bytes.append(UInt8(ascii: "}"))
    }

    public init(json bytes: [UInt8]) throws {
        let members = try JSONValue(json: bytes).members(of: "the payload")
        guard case .string(let key)? = members["key"] else { throw PayloadShapeError("`key` must be a string") }
        guard let value = members["value"] else { throw PayloadShapeError("`value` is missing") }
        self.init(key: key, value: value)
    }
}

extension KVStore.Delete: JSONReadable {
    public init(json bytes: [UInt8]) throws {
        let members = try JSONValue(json: bytes).members(of: "the payload")
        guard case .string(let key)? = members["key"] else { throw PayloadShapeError("`key` must be a string") }
        self.init(key: key)
    }
}
