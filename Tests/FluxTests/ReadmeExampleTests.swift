import Testing

@testable import Flux

/// The README's first example, verbatim, so that the README cannot drift from the code.
@Suite("README example")
struct ReadmeExampleTests {
    @Test func theFirstScreenExampleRunsAsDocumented() throws {
        let dispatcher = Dispatcher<String>()
        var log: [String] = []
        var countryToken: DispatchToken!
        dispatcher.register { action in
            try dispatcher.waitFor([countryToken])   // the country store runs first, whatever the order
            log.append("city saw \(action)")
        }
        countryToken = dispatcher.register { log.append("country saw \($0)") }
        try dispatcher.dispatch("country-update")    // log: country saw…, then city saw…

        #expect(log == ["country saw country-update", "city saw country-update"])
    }
}
