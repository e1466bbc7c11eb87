/// A type that writes its own canonical JSON, for the bus's hot path: `JSONEncoder` builds a tree of boxes for
/// every value, which dominates the cost of a small action and makes a large state slow to snapshot.
///
/// What it writes must be canonical, as `JSONCoding` promises: the same value always gives the same bytes (sorted
/// keys, no whitespace). It must also decode, with `Decodable`, to an equal value.
public protocol JSONWritable: Encodable {
    /// Appends the value's canonical JSON to `bytes`.
    func writeJSON(into bytes: inout [UInt8])
}

/// A type that reads itself from JSON bytes without `JSONDecoder`, for the bus's hot path. It must accept exactly
/// what its `Decodable` conformance accepts from JSON, and give the same value.
public protocol JSONReadable: Decodable {
    /// Decodes the value from JSON bytes.
    /// - Throws: an error that names what is wrong, when the bytes are not valid JSON of this shape.
    init(json bytes: [UInt8]) throws
}
