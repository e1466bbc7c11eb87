import Testing

@testable import Flux

@Suite("Dependency graph")
struct DependencyGraphTests {
    @Test func flightChainOrdersAndLayers() throws {
        var graph = DependencyGraph()
        try graph.add("country")
        try graph.add("city", dependsOn: ["country"])
        try graph.add("price", dependsOn: ["city"])
        #expect(graph.order == ["country", "city", "price"])
        #expect(graph.layers == [["country"], ["city"], ["price"]])
        #expect(graph.dependents(of: "country") == ["city"])
        #expect(graph.transitiveDependencies(of: "price") == ["city", "country"])
    }

    @Test func independentStoresKeepRegistrationOrder() throws {
        let graph = try DependencyGraph([
            .init(name: "z"), .init(name: "report", dependsOn: ["b", "z"]), .init(name: "a"), .init(name: "b"),
        ])
        #expect(graph.order == ["z", "a", "b", "report"])
        #expect(graph.layers == [["z", "a", "b"], ["report"]])
        #expect(graph.names == ["z", "report", "a", "b"])
    }

    @Test func aBatchMayReferToLaterDeclarations() throws {
        let graph = try DependencyGraph([.init(name: "price", dependsOn: ["city"]), .init(name: "city")])
        #expect(graph.order == ["city", "price"])
    }

    @Test func aCycleIsRejectedWithItsPath() throws {
        var graph = DependencyGraph()
        try graph.add("country")
        let error = #expect(throws: GraphError.self) {
            try graph.add(contentsOf: [
                .init(name: "city", dependsOn: ["country", "price"]), .init(name: "price", dependsOn: ["city"]),
            ])
        }
        #expect(error?.code == .cycle)
        #expect(error?.related == ["city", "price", "city"])
        #expect(error?.description == "dependency cycle: city -> price -> city; remove one of these waits")
        // A refused declaration leaves the graph as it was.
        #expect(graph.names == ["country"])
    }

    @Test func aSelfDependencyIsACycle() {
        let error = #expect(throws: GraphError.self) { try DependencyGraph([.init(name: "a", dependsOn: ["a"])]) }
        #expect(error?.related == ["a", "a"])
    }

    @Test func anUnknownDependencyIsRejectedByName() {
        var graph = DependencyGraph()
        let error = #expect(throws: GraphError.self) { try graph.add("price", dependsOn: ["cty"]) }
        #expect(error?.code == .unknownDependency)
        #expect(error?.store == "price")
        #expect(error?.related == ["cty"])
        #expect(error?.description.contains("`price` waits for `cty`") == true)
        #expect(graph.names.isEmpty)
    }

    @Test func aDuplicateNameIsRejected() throws {
        var graph = DependencyGraph()
        try graph.add("country")
        let error = #expect(throws: GraphError.self) { try graph.add("country") }
        #expect(error?.code == .duplicateName)
        #expect(error?.description.contains("`country` is already registered") == true)
        #expect(throws: GraphError.self) { try DependencyGraph([.init(name: "x"), .init(name: "x")]) }
    }

    @Test func anEmptyNameIsRejected() {
        #expect(throws: GraphError(code: .emptyName, store: "")) { try DependencyGraph([.init(name: "")]) }
    }

    @Test func orderPutsEveryStoreAfterItsDependencies() throws {
        // A wider graph: a diamond with a tail, declared in a scrambled order.
        let graph = try DependencyGraph([
            .init(name: "e", dependsOn: ["d"]), .init(name: "d", dependsOn: ["b", "c"]),
            .init(name: "c", dependsOn: ["a"]), .init(name: "b", dependsOn: ["a"]), .init(name: "a"),
        ])
        for node in graph.nodes {
            let position = graph.order.firstIndex(of: node.name)!
            for dependency in node.dependsOn { #expect(graph.order.firstIndex(of: dependency)! < position) }
        }
        #expect(graph.layers == [["a"], ["c", "b"], ["d"], ["e"]])
    }
}
