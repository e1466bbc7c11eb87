// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "FluxBus",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "Flux", targets: ["Flux"]),
        .library(name: "FluxStores", targets: ["FluxStores"]),
        .library(name: "FluxBus", targets: ["FluxBus"]),
        .library(name: "FluxBusClient", targets: ["FluxBusClient"]),
        .library(name: "FluxBusProtocol", targets: ["FluxBusProtocol"]),
        .library(name: "ZeroMQ", targets: ["ZeroMQ"]),
        .executable(name: "fluxbus", targets: ["fluxbus"]),
        .executable(name: "fluxbus-fuzz-peer", targets: ["FuzzPeer"]),
        .executable(name: "CodecFuzzer", targets: ["CodecFuzzer"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/x-sheep/swift-property-based.git", from: "2.0.1"),
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift.git", from: "0.2.0"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
    ],
    targets: [
        // In-process Flux: dispatcher, dependency graph, typed stores and hub, Redux store. No I/O, no dependencies.
        .target(name: "Flux"),
        // Ready-made stores: kv, counter, and the flight example's country, city and price.
        .target(name: "FluxStores", dependencies: ["Flux"]),

        // libzmq; only the ZeroMQ target imports it. See `zmqPkgConfig` below for where its header comes from.
        .systemLibrary(
            name: "CZMQ",
            pkgConfig: zmqPkgConfig,
            providers: [.apt(["libzmq3-dev"]), .brew(["zeromq"])]
        ),
        .target(name: "ZeroMQ", dependencies: ["CZMQ"]),
        // The signal handler that records which store's handler a worker died in (a poison action).
        .target(name: "CCrashMarker"),

        // The wire messages and their codec: pure Swift, fuzzable without sockets.
        .target(name: "FluxBusProtocol"),

        // The client alone: BusClient, its results and errors, and CURVE settings. No GRDB, no ServiceLifecycle, no
        // coordinator: what a process that only dispatches and reads state links.
        .target(name: "FluxBusClient", dependencies: ["Flux", "FluxBusProtocol", "ZeroMQ"]),

        // The distributed dispatcher: coordinator, worker, WorkerMain; re-exports FluxBusClient.
        .target(
            name: "FluxBus",
            dependencies: [
                "Flux", "FluxBusClient", "FluxBusProtocol", "ZeroMQ", "CCrashMarker",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ]
        ),

        // The CLI's tools, kept out of the library: `fluxbus bench`'s scenarios and report, `fluxbus demo`, the text and
        // JSON views of status, graph, results and tail, and the `--store NAME=KIND` kinds (StoreSpec, StoreKind).
        // Only these need FluxStores and hdrhistogram. Not a product: the CLI, the guide's examples and the tests use it.
        .target(
            name: "FluxBusTools",
            dependencies: [
                "FluxBus", "Flux", "FluxStores", "FluxBusProtocol", "ZeroMQ",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Histogram", package: "hdrhistogram-swift"),
            ]
        ),

        // The CLI: argument parsing only, everything else lives in FluxBus and FluxBusTools.
        .executableTarget(
            name: "fluxbus",
            dependencies: [
                "FluxBus", "FluxBusTools", "Flux", "FluxStores", "FluxBusProtocol",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ]
        ),

        // docs/GUIDE.md's examples, one file per part of the guide. GuideExamplesTests runs every example and holds
        // each snippet in the guide to its region here (`// guide:begin NAME` … `// guide:end NAME`).
        .target(
            name: "GuideExamples",
            dependencies: [
                "Flux", "FluxBus", "FluxBusTools", "FluxBusProtocol", "ZeroMQ",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        // The guide's worker executable: the shop's stores on a worker process of their own.
        // guide:begin package-worker-target
        .executableTarget(name: "guide-worker", dependencies: ["FluxBus", "GuideExamples"]),
        // guide:end package-worker-target
        // A hostile peer for the socket-level fuzz test: random and mutated messages to a coordinator's ROUTER.
        .executableTarget(name: "FuzzPeer", dependencies: ["FluxBusProtocol", "ZeroMQ"]),
        // The codec's libFuzzer harness (`make fuzz` builds it with -sanitize=fuzzer -DFUZZING); without FUZZING, a
        // runner that replays corpus files through the same checks.
        .executableTarget(name: "CodecFuzzer", dependencies: ["FluxBusProtocol"]),
        // The in-process workloads with a synchronous main, for callgrind (scripts/instruction-counts.sh).
        .executableTarget(
            name: "FluxInstructions",
            dependencies: ["FluxBusTools", "FluxBus", "FluxBusProtocol", "FluxStores", "ZeroMQ", .product(name: "Logging", package: "swift-log")]),

        .testTarget(name: "FluxTests", dependencies: ["Flux", "FluxStores"]),
        .testTarget(name: "ZeroMQTests", dependencies: ["ZeroMQ"]),
        .testTarget(
            name: "FluxBusTests",
            dependencies: [
                "FluxBus", "FluxBusTools", "Flux", "FluxStores", .product(name: "PropertyBased", package: "swift-property-based"),
            ]
        ),
        // Deterministic simulation: the real engines under a seeded network, clock and disk, with faults.
        .testTarget(
            name: "SimulationTests",
            dependencies: ["FluxBus", "Flux", "FluxBusProtocol", .product(name: "Logging", package: "swift-log")]
        ),
        // Real processes: the built `fluxbus` binary, and a worker written in Python from docs/PROTOCOL.md.
        .testTarget(
            name: "EndToEndTests",
            dependencies: [
                "FluxBus", "FluxBusTools", "Flux", "FluxBusProtocol", "FluxStores", "ZeroMQ",
                .product(name: "GRDB", package: "GRDB.swift"),
            ]
        ),
        .testTarget(
            name: "GuideExamplesTests",
            dependencies: [
                "GuideExamples", "Flux", "FluxBus", "FluxBusProtocol", "ZeroMQ",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        .testTarget(
            name: "FluxBusProtocolTests",
            dependencies: [
                "FluxBusProtocol",
                .product(name: "PropertyBased", package: "swift-property-based"),
            ]
        ),
    ]
)

// One settings loop for every target, in the manner of swift-log.
for target in package.targets where target.type != .system {
    var settings = target.swiftSettings ?? []
    settings.append(.enableUpcomingFeature("ExistentialAny"))
    settings.append(.enableUpcomingFeature("MemberImportVisibility"))
    target.swiftSettings = settings
}

// Where libzmq's header and library come from. On Linux they are on the compiler's and linker's default paths
// (/usr/include, /usr/lib/<triple>, /usr/local), and `pkg-config --cflags libzmq` adds only include paths zmq.h does
// not need, one of them a flag SwiftPM refuses: Debian's libzmq requires krb5-gssapi, whose `-isystem
// /usr/include/mit-krb5` every build, ours and every package's that depends on us, printed as "warning: prohibited
// flag(s)". Homebrew's prefix is not a default path, so
// elsewhere SwiftPM asks pkg-config. Sources/CZMQ/shim.h says what to install when the header is missing.
#if os(Linux)
var zmqPkgConfig: String? { nil }
#else
var zmqPkgConfig: String? { "libzmq" }
#endif
