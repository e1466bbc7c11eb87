import Flux

// The flight chain runs three stores in a row, each on the critical path of a dispatch: every one decodes a payload or
// its dependency's output and encodes its own output and state, about nine `JSONDecoder` or `JSONEncoder` calls a
// dispatch at about 1.7 µs each when warm (docs/BENCHMARKS.md, twenty-ninth session). The plain shapes are read and
// written by hand; every other input goes to `JSONDecoder`, which decides. What is written is byte for byte what
// `JSONCoding`'s encoder writes (sorted keys, a nil member left out, strings escaped as ``CanonicalJSON`` escapes
// them), so digests and snapshots do not change.

extension Flight.CountryUpdate: JSONReadable, JSONWritable {
    public init(json bytes: [UInt8]) throws {
        self = try FlatJSONObject.requiredString("country", in: bytes, Self.init(country:))
    }

    public func writeJSON(into bytes: inout [UInt8]) {
        var object = FlightJSONObject.open(&bytes)
        object.member("country", country, into: &bytes)
        object.close(&bytes)
    }
}

extension Flight.CityUpdate: JSONReadable, JSONWritable {
    public init(json bytes: [UInt8]) throws {
        self = try FlatJSONObject.requiredString("city", in: bytes, Self.init(city:))
    }

    public func writeJSON(into bytes: inout [UInt8]) {
        var object = FlightJSONObject.open(&bytes)
        object.member("city", city, into: &bytes)
        object.close(&bytes)
    }
}

extension CountryStore.State: JSONReadable, JSONWritable {
    public init(json bytes: [UInt8]) throws {
        if let country = FlatJSONObject.string("country", in: bytes) {
            self.init(country: country.optional)
        } else {
            self = try JSONCoding.decodeWithFoundation(Self.self, from: bytes)
        }
    }

    public func writeJSON(into bytes: inout [UInt8]) {
        var object = FlightJSONObject.open(&bytes)
        object.member("country", country, into: &bytes)
        object.close(&bytes)
    }
}

extension CityStore.State: JSONReadable, JSONWritable {
    public init(json bytes: [UInt8]) throws {
        if let country = FlatJSONObject.string("country", in: bytes), let city = FlatJSONObject.string("city", in: bytes) {
            self.init(country: country.optional, city: city.optional)
        } else {
            self = try JSONCoding.decodeWithFoundation(Self.self, from: bytes)
        }
    }

    public func writeJSON(into bytes: inout [UInt8]) {
        var object = FlightJSONObject.open(&bytes)
        object.member("city", city, into: &bytes)
        object.member("country", country, into: &bytes)
        object.close(&bytes)
    }
}

extension PriceStore.State: JSONWritable {
    public func writeJSON(into bytes: inout [UInt8]) {
        var object = FlightJSONObject.open(&bytes)
        object.member("city", city, into: &bytes)
        object.member("country", country, into: &bytes)
        object.member("price", price, into: &bytes)
        object.close(&bytes)
    }
}

extension FlatJSONObject {
    /// A payload of one required string member: made by `make` from the plain shape, otherwise by `JSONDecoder`.
    static func requiredString<T: Decodable>(_ key: StaticString, in bytes: [UInt8], _ make: (String) -> T) throws -> T {
        if case .value(let text)? = string(key, in: bytes) { return make(text) }
        return try JSONCoding.decodeWithFoundation(T.self, from: bytes)
    }
}

extension FlatJSONObject.Member {
    /// The member as a Swift optional: absent and `null` are both nil, as a synthesized `Decodable` reads them.
    var optional: Value? {
        if case .value(let value) = self { return value }
        return nil
    }
}

/// One object's members, written in the order given (sorted), a nil one left out as a synthesized `Encodable` does.
private struct FlightJSONObject {
    private var first = true

    /// Appends `{`.
    static func open(_ bytes: inout [UInt8]) -> FlightJSONObject {
        bytes.append(UInt8(ascii: "{"))
        return FlightJSONObject()
    }

    /// Appends `"name":`, after a comma unless it is the first member.
    mutating func key(_ name: StaticString, into bytes: inout [UInt8]) {
        if !first { bytes.append(UInt8(ascii: ",")) }
        first = false
        bytes.append(UInt8(ascii: "\""))
        name.withUTF8Buffer { bytes.append(contentsOf: $0) }
        bytes.append(contentsOf: #"":"#.utf8)
    }

    mutating func member(_ name: StaticString, _ value: String?, into bytes: inout [UInt8]) {
        guard let value else { return }
        key(name, into: &bytes)
        CanonicalJSON.write(value, into: &bytes)
    }

    mutating func member(_ name: StaticString, _ value: Int?, into bytes: inout [UInt8]) {
        guard let value else { return }
        key(name, into: &bytes)
        bytes.append(contentsOf: String(value).utf8)
    }

    /// Appends `}`.
    func close(_ bytes: inout [UInt8]) { bytes.append(UInt8(ascii: "}")) }
}
