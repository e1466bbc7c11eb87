/// The "waits for" graph of a set of stores, checked when stores are declared rather than mid-dispatch.
///
/// Nodes are store names; an edge from A to B says A waits for B. Declarations are refused with a ``GraphError``
/// for a cycle (named by its path), a dependency on an unknown name, or a duplicate name, and a refused
/// declaration leaves the graph unchanged. The graph keeps a stable execution ``order``: every store after the
/// stores it waits for, and otherwise in registration order. The coordinator of the distributed bus uses the same
/// type for its global graph.
///
/// ```swift
/// var graph = DependencyGraph()
/// try graph.add("country")
/// try graph.add("city", dependsOn: ["country"])
/// try graph.add("price", dependsOn: ["city"])
/// graph.order   // ["country", "city", "price"]
/// graph.layers  // [["country"], ["city"], ["price"]]
/// ```
public struct DependencyGraph: Sendable, Hashable, CustomStringConvertible {
    /// One store and the stores it waits for.
    public struct Node: Sendable, Hashable, Codable {
        public let name: String
        public let dependsOn: [String]

        public init(name: String, dependsOn: [String] = []) {
            self.name = name
            self.dependsOn = dependsOn
        }
    }

    /// The nodes in registration order.
    public private(set) var nodes: [Node] = []
    /// Every store after those it waits for; ties keep registration order.
    public private(set) var order: [String] = []
    /// The ``order`` cut into layers: layer 0 waits for nothing, layer n waits for something in layer n - 1.
    public private(set) var layers: [[String]] = []
    private var indexByName: [String: Int] = [:]

    /// Creates an empty graph.
    public init() {}

    /// Creates a graph from declarations that may refer to each other in any order.
    /// - Throws: ``GraphError`` for a cycle, an unknown dependency, or a duplicate or empty name.
    public init(_ nodes: [Node]) throws(GraphError) {
        try add(contentsOf: nodes)
    }

    /// The store names in registration order.
    public var names: [String] { nodes.map(\.name) }

    /// Whether a store of this name is declared.
    public func contains(_ name: String) -> Bool { indexByName[name] != nil }

    /// The stores that `name` waits for directly, in declaration order; empty for an unknown name.
    public func dependencies(of name: String) -> [String] {
        indexByName[name].map { nodes[$0].dependsOn } ?? []
    }

    /// The stores that wait directly for `name`, in registration order.
    public func dependents(of name: String) -> [String] {
        nodes.filter { $0.dependsOn.contains(name) }.map(\.name)
    }

    /// Every store that `name` waits for, directly or through others.
    public func transitiveDependencies(of name: String) -> Set<String> {
        var seen = Set<String>()
        var stack = dependencies(of: name)
        while let next = stack.popLast() {
            if seen.insert(next).inserted { stack.append(contentsOf: dependencies(of: next)) }
        }
        return seen
    }

    /// Declares one store.
    /// - Throws: ``GraphError`` when the name is empty or taken, or a dependency is unknown.
    public mutating func add(_ name: String, dependsOn: [String] = []) throws(GraphError) {
        try add(contentsOf: [Node(name: name, dependsOn: dependsOn)])
    }

    /// Declares several stores at once; they may wait for each other and for stores already declared.
    /// All are added, or none.
    /// - Throws: ``GraphError`` for the first problem found.
    public mutating func add(contentsOf newNodes: [Node]) throws(GraphError) {
        var candidate = self
        for node in newNodes {
            guard !node.name.isEmpty else { throw GraphError(code: .emptyName, store: node.name) }
            guard candidate.indexByName[node.name] == nil else {
                throw GraphError(code: .duplicateName, store: node.name)
            }
            candidate.indexByName[node.name] = candidate.nodes.count
            candidate.nodes.append(node)
        }
        for node in newNodes {
            for dependency in node.dependsOn where candidate.indexByName[dependency] == nil {
                throw GraphError(code: .unknownDependency, store: node.name, related: [dependency])
            }
        }
        if let cycle = candidate.findCycle() {
            throw GraphError(code: .cycle, store: cycle[0], related: cycle)
        }
        candidate.computeOrder()
        self = candidate
    }

    /// A copy with more stores declared; see ``add(contentsOf:)``.
    public func adding(_ newNodes: [Node]) throws(GraphError) -> DependencyGraph {
        var copy = self
        try copy.add(contentsOf: newNodes)
        return copy
    }

    public var description: String {
        nodes.map { node in
            node.dependsOn.isEmpty ? node.name : "\(node.name) -> \(node.dependsOn.joined(separator: ", "))"
        }.joined(separator: "\n")
    }

    public static func == (lhs: DependencyGraph, rhs: DependencyGraph) -> Bool { lhs.nodes == rhs.nodes }
    public func hash(into hasher: inout Hasher) { hasher.combine(nodes) }

    // MARK: - Checking and ordering

    /// Depth-first search along waits-for edges; returns the first ring found as a path such as
    /// `["city", "price", "city"]`.
    private func findCycle() -> [String]? {
        enum Colour { case unvisited, onPath, done }
        var colour = [Colour](repeating: .unvisited, count: nodes.count)
        var path: [Int] = []

        func visit(_ index: Int) -> [String]? {
            colour[index] = .onPath
            path.append(index)
            for dependency in nodes[index].dependsOn {
                guard let next = indexByName[dependency] else { continue }
                switch colour[next] {
                case .onPath:
                    let start = path.firstIndex(of: next)!
                    return (path[start...] + [next]).map { nodes[$0].name }
                case .unvisited:
                    if let ring = visit(next) { return ring }
                case .done:
                    break
                }
            }
            path.removeLast()
            colour[index] = .done
            return nil
        }

        for index in nodes.indices where colour[index] == .unvisited {
            if let ring = visit(index) { return ring }
        }
        return nil
    }

    /// Kahn's algorithm, always taking the earliest-registered store that is ready, so independent stores keep
    /// their registration order. Graphs here are small (tens of stores), so the quadratic scan is the simple choice.
    private mutating func computeOrder() {
        var depth = [Int](repeating: -1, count: nodes.count)
        var ordered: [Int] = []
        ordered.reserveCapacity(nodes.count)
        while ordered.count < nodes.count {
            for index in nodes.indices where depth[index] < 0 {
                let dependencyDepths = nodes[index].dependsOn.map { depth[indexByName[$0]!] }
                guard !dependencyDepths.contains(where: { $0 < 0 }) else { continue }
                depth[index] = (dependencyDepths.max() ?? -1) + 1
                ordered.append(index)
                break
            }
        }
        order = ordered.map { nodes[$0].name }
        let layerCount = (depth.max() ?? -1) + 1
        layers = (0..<layerCount).map { layer in ordered.filter { depth[$0] == layer }.map { nodes[$0].name } }
    }
}
