// swift-tools-version: 6.1
// guide:begin own-package-manifest
import PackageDescription

let package = Package(
    name: "TodoSync",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(path: "../FluxBus"),
    ],
    targets: [
        // The stores, shared by the worker and anything that reads their state types.
        .target(name: "TodoStores", dependencies: [.product(name: "Flux", package: "FluxBus")]),
        // Hosts the stores on the bus: FluxBus (coordinator, worker, GRDB, ServiceLifecycle).
        .executableTarget(
            name: "todo-worker",
            dependencies: ["TodoStores", .product(name: "FluxBus", package: "FluxBus")]),
        // Only dispatches and reads: FluxBusClient, without GRDB or the coordinator.
        .executableTarget(
            name: "todo-client",
            dependencies: ["TodoStores", .product(name: "FluxBusClient", package: "FluxBus")]),
    ]
)
// guide:end own-package-manifest
