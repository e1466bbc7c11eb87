// guide:begin worker-main
import FluxBus
import GuideExamples   // the library that holds your stores

/// A worker process for the shop's stores: `guide-worker --id shop-1 --coordinator tcp://127.0.0.1:7401`.
@main
struct ShopWorker {
    static func main() async {
        await WorkerMain.run(stores: [InventoryStore.self, CartStore.self, AuditStore.self])
    }
}
// guide:end worker-main
