import Foundation
import Testing

@testable import Flux
@testable import FluxStores

/// The flight example's payloads, outputs and states are read and written by hand in their plain shape: whatever the
/// values, the bytes written must be `JSONEncoder`'s (digests and snapshots depend on them), and whatever the input,
/// a read must give what `JSONDecoder` gives, and refuse exactly what it refuses.
@Suite struct FlightJSONTests {
    /// Strings that need every kind of escape, and none.
    static let strings: [String?] = [
        nil, "", "Japan", "New York", "a/b", "quote \" and back\\slash", "tab\tnew\nline\r\u{8}\u{C}", "\u{0}\u{1}\u{1F}\u{7F}",
        "Österreich", "日本", "🛫", "\u{2028}\u{2029}\u{FEFF}", "e\u{301}",
    ]

    static func foundation(_ value: some Encodable) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return Array(try encoder.encode(value))
    }

    static func ours(_ value: some JSONWritable) -> [UInt8] {
        var bytes: [UInt8] = []
        value.writeJSON(into: &bytes)
        return bytes
    }

    @Test func writtenBytesAreJSONEncoders() throws {
        for country in Self.strings {
            for city in Self.strings {
                let cityState = CityStore.State(country: country, city: city)
                #expect(Self.ours(cityState) == (try Self.foundation(cityState)), "\(cityState)")
                for price in [nil, 0, -1, 599, Int.max, Int.min] {
                    let priceState = PriceStore.State(country: country, city: city, price: price)
                    #expect(Self.ours(priceState) == (try Self.foundation(priceState)), "\(priceState)")
                }
            }
            let countryState = CountryStore.State(country: country)
            #expect(Self.ours(countryState) == (try Self.foundation(countryState)))
            guard let country else { continue }
            #expect(Self.ours(Flight.CountryUpdate(country: country)) == (try Self.foundation(Flight.CountryUpdate(country: country))))
            #expect(Self.ours(Flight.CityUpdate(city: country)) == (try Self.foundation(Flight.CityUpdate(city: country))))
        }
    }

    /// A store's output is an optional; the bus encodes it through `JSONCoding`, which must find the hand writer
    /// inside the optional, not fall back to `JSONEncoder`.
    @Test func anOptionalOutputIsWrittenByHand() throws {
        let output: CityStore.State? = CityStore.State(country: "Japan", city: "Tokyo")
        #expect((output as any Sendable) as? any JSONWritable != nil)
        #expect(try JSONCoding.encode(output) == Array(#"{"city":"Tokyo","country":"Japan"}"#.utf8))
    }

    static let inputs: [String] = [
        #"{"country":"Japan"}"#, #"{"country":"Japan","pad":"xxxxxxxx"}"#, #" { "pad" : 1 , "country" : "Spain" } "#,
        #"{"country":null}"#, #"{}"#, #"{"country":1}"#, #"{"country":"Jap\u0061n"}"#, #"{"country":"日本"}"#,
        #"{"country":"a","country":"b"}"#, #"{"country":"Japan",}"#, #"{"country":"Japan""#, #"[]"#, "",
        #"{"city":"Tokyo","country":"Japan"}"#, #"{"city":null,"country":"Japan"}"#, #"{"city":"Tokyo"}"#,
        #"{"city":["Tokyo"],"country":"Japan"}"#, #"{"city":"Tokyo","country":"Japan"}x"#, #"{"city":true}"#,
        #"{"country":"Japan","x":{"y":1}}"#,
    ]

    @Test(arguments: inputs)
    func readsAreJSONDecoders(input: String) {
        func same<T: Decodable & Equatable>(_ type: T.Type, _ ours: (([UInt8]) throws -> T)) {
            let mine = try? ours(Array(input.utf8))
            let theirs = try? JSONDecoder().decode(T.self, from: Data(input.utf8))
            #expect(mine == theirs, "\(T.self) from \(input)")
        }
        same(Flight.CountryUpdate.self, Flight.CountryUpdate.init(json:))
        same(Flight.CityUpdate.self, Flight.CityUpdate.init(json:))
        same(CountryStore.State.self, CountryStore.State.init(json:))
        same(CityStore.State.self, CityStore.State.init(json:))
    }

    @Test func aPlainMemberIsFoundByHand() {
        #expect(FlatJSONObject.string("country", in: Array(#"{"country":"Japan","by":1}"#.utf8)) == .value("Japan"))
        #expect(FlatJSONObject.string("country", in: Array(#"{"country":null}"#.utf8)) == .null)
        #expect(FlatJSONObject.string("country", in: Array(#"{"city":"Tokyo"}"#.utf8)) == .absent)
        #expect(FlatJSONObject.string("country", in: Array(#" {} "#.utf8)) == .absent)
        // Left to JSONDecoder: another type, an escape, non-ASCII bytes, a repeated key.
        for input in [#"{"country":1}"#, #"{"country":"a\"b"}"#, #"{"country":"日本"}"#, #"{"country":"a","country":"a"}"#] {
            #expect(FlatJSONObject.string("country", in: Array(input.utf8)) == nil, "\(input)")
        }
    }

    /// What a replica writes, another reads back unchanged.
    @Test func writtenStatesReadBack() throws {
        for country in Self.strings {
            for city in Self.strings {
                let state = CityStore.State(country: country, city: city)
                #expect(try CityStore.State(json: Self.ours(state)) == state)
            }
            #expect(try CountryStore.State(json: Self.ours(CountryStore.State(country: country))) == CountryStore.State(country: country))
        }
    }
}
