import Flux
import Foundation
import FluxStores

/// The seeds' flight example run in process: each action, what every store did, and every store's state after it.
///
/// `fluxbus demo` prints this until the distributed bus takes the demo over.
public enum FlightDemo {
    /// The actions the demo dispatches, in order: a country, a city, another country, one the city store cannot
    /// handle (so the price store is skipped), and a last city.
    public static let script: [AnyAction] = [
        AnyAction(Action(Flight.countryUpdate, .init(country: "France"))),
        AnyAction(Action(Flight.cityUpdate, .init(city: "Lyon"))),
        AnyAction(Action(Flight.countryUpdate, .init(country: "Japan"))),
        AnyAction(Action(Flight.countryUpdate, .init(country: "Atlantis"))),
        AnyAction(Action(Flight.cityUpdate, .init(city: "Osaka"))),
    ]

    /// Runs the script on a fresh hub and writes a report, line by line, to `write`.
    /// - Returns: the dispatch reports, for callers that check them.
    /// - Throws: a ``GraphError`` if the flight stores' graph were invalid, or a JSON encoding error.
    @discardableResult
    public static func runInProcess(write: (String) -> Void) throws -> [DispatchReport] {
        let hub = Hub()
        try hub.register(Flight.stores)
        write("FluxBus flight demo (in process): country <- city <- price")
        write("")
        var reports: [DispatchReport] = []
        for action in script {
            let report = try hub.dispatch(action)
            reports.append(report)
            write("#\(report.sequence) \(action.name) \(String(decoding: try action.encodedPayload(), as: UTF8.self))")
            for outcome in report.outcomes { write("    \(outcome)") }
            for name in hub.graph.order {
                let state = try hub.anyStore(named: name).map { String(decoding: try $0.encodedState(), as: UTF8.self) }
                write("    \(name.padding(toLength: 8, withPad: " ", startingAt: 0)) \(state ?? "?")")
            }
            write("")
        }
        write("graph (a store runs after those it waits for):")
        for (depth, layer) in hub.graph.layers.enumerated() {
            for name in layer {
                let waits = hub.graph.dependencies(of: name)
                write("    layer \(depth): \(name)" + (waits.isEmpty ? "" : " waits for \(waits.joined(separator: ", "))"))
            }
        }
        return reports
    }
}
