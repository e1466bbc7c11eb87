import Flux

/// The ``KVStore``'s state: a map from string keys to JSON values that keeps its digest up to date entry by entry,
/// so that acknowledging an action costs the size of the entry it changed, not the size of the map.
///
/// On the wire it is the JSON object itself. Its digest is the `MapDigest` of its members, each member being the
/// canonical bytes `"key":value` (see ``CanonicalJSON``).
public struct KVState: Hashable, Sendable, DigestedState, ExpressibleByDictionaryLiteral {
    /// The entries.
    public private(set) var entries: [String: JSONValue]
    private var digest = MapDigest()

    /// A map holding `entries`.
    public init(_ entries: [String: JSONValue] = [:]) {
        self.entries = entries
        for (key, value) in entries { digest.insert(member: Self.member(key, value)) }
    }

    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self.init(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }

    /// The value for `key`; setting `nil` removes the entry.
    public subscript(key: String) -> JSONValue? {
        get { entries[key] }
        set {
            let old = newValue == nil ? entries.removeValue(forKey: key) : entries.updateValue(newValue!, forKey: key)
            if let old { digest.remove(member: Self.member(key, old)) }
            if let newValue { digest.insert(member: Self.member(key, newValue)) }
        }
    }

    /// How many entries there are.
    public var count: Int { entries.count }
    /// Whether there are none.
    public var isEmpty: Bool { entries.isEmpty }

    public var stateDigest: UInt64 { digest.value }

    private static func member(_ key: String, _ value: JSONValue) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(key.utf8.count + 32)
        CanonicalJSON.writeMember(key, value, into: &bytes)
        return bytes
    }
}

extension KVState: Codable, JSONWritable, JSONReadable {
    public init(from decoder: any Decoder) throws {
        self.init(try decoder.singleValueContainer().decode([String: JSONValue].self))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(entries)
    }

    public func writeJSON(into bytes: inout [UInt8]) {
        CanonicalJSON.write(.object(entries), into: &bytes)
    }

    public init(json bytes: [UInt8]) throws {
        guard case .object(let entries) = try JSONParser.parse(bytes) else {
            throw JSONParser.Failure(reason: "the kv state must be a JSON object", offset: 0)
        }
        self.init(entries)
    }
}
