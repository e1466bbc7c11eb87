import Foundation
import FluxBusProtocol

/// How the CLI shows the waitFor graph: text, Graphviz DOT (`dot -Tpng`), or JSON.
public enum GraphView {
    /// `graph --format json`: one entry per store.
    public struct JSON: Codable, Sendable, Hashable {
        public let name: String
        public let dependsOn: [String]
        public let handles: [String]
        public let replicas: Int
    }

    public static func json(_ graph: Message.Graph) -> [JSON] {
        graph.stores.map { .init(name: $0.name, dependsOn: $0.dependsOn, handles: $0.handlesAll ? ["*"] : $0.handles, replicas: Int($0.replicas)) }
    }

    public static func text(_ graph: Message.Graph) -> String {
        guard !graph.stores.isEmpty else { return "no stores yet: start a worker with `fluxbus worker --id ID --store NAME=KIND`" }
        let declared = Set(graph.stores.map(\.name))
        return graph.stores.map { node in
            var line = node.name
            if !node.dependsOn.isEmpty {
                line += " waits for " + node.dependsOn.map { declared.contains($0) ? $0 : "\($0) (not hosted yet)" }.joined(separator: ", ")
            }
            line += "  [\(node.replicas) live replica\(node.replicas == 1 ? "" : "s"); handles "
                + (node.handlesAll ? "every action" : node.handles.joined(separator: ", ")) + "]"
            return line
        }.joined(separator: "\n")
    }

    /// Edges point from a store to the store it waits for.
    public static func dot(_ graph: Message.Graph) -> String {
        var lines = ["digraph fluxbus {", "  rankdir=BT;", "  node [shape=box, style=rounded];"]
        for node in graph.stores {
            lines.append("  \(quote(node.name)) [label=\(quote("\(node.name)\n\(node.replicas) replica\(node.replicas == 1 ? "" : "s")"))];")
        }
        for node in graph.stores {
            for dependency in node.dependsOn {
                lines.append("  \(quote(node.name)) -> \(quote(dependency)) [label=\"waits for\"];")
            }
        }
        lines.append("}")
        return lines.joined(separator: "\n")
    }

    private static func quote(_ text: String) -> String {
        "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"").replacingOccurrences(of: "\n", with: "\\n") + "\""
    }
}
