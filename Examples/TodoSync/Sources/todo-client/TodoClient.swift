// guide:begin own-package-client
import Flux
import FluxBusClient
import Foundation
import TodoStores

/// `todo-client ID TITLE`: adds an item, completes it, and prints the stats. Exits 1 when a dispatch fails.
@main
struct TodoClient {
    static func main() async throws {
        let arguments = CommandLine.arguments.dropFirst()
        guard arguments.count == 2, let id = arguments.first, let title = arguments.last else {
            print("usage: todo-client ID TITLE")
            exit(2)
        }
        let client = try await BusClient(timeout: .seconds(5))   // $FLUXBUS_COORDINATOR, or tcp://127.0.0.1:7401
        try await client.waitUntilLive(stores: [TodoStore.name, StatsStore.name])
        for result in [
            try await client.dispatch(Action(Todo.add, Todo.Item(id: id, title: title)), requestID: "add-\(id)"),
            try await client.dispatch(Action(Todo.complete, id), requestID: "complete-\(id)"),
        ] where !result.succeeded {
            print("#\(result.sequence) \(result.verdict): \(result.stores.map { "\($0.name) \($0.status)" })")
            exit(1)
        }
        let stats = try await client.state(of: StatsStore.self)
        print("open \(stats.open), done \(stats.done)")
        await client.close()
    }
}
// guide:end own-package-client
