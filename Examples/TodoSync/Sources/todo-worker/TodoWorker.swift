// guide:begin own-package-worker
import FluxBus
import TodoStores

@main
struct TodoWorker {
    static func main() async {
        await WorkerMain.run(stores: [TodoStore.self, StatsStore.self])
    }
}
// guide:end own-package-worker
