import Flux
import Foundation

/// A graph pinned up front (`fluxbus coordinator --topology FILE`): the stores, what each waits for, and how many
/// replicas each needs. Workers whose declarations disagree with it are refused.
///
/// The file is JSON:
/// ```json
/// {"stores": [
///   {"name": "country"},
///   {"name": "city", "dependsOn": ["country"]},
///   {"name": "price", "dependsOn": ["city"], "replicas": 2}
/// ]}
/// ```
public struct Topology: Codable, Sendable, Hashable {
    /// One pinned store.
    public struct Store: Codable, Sendable, Hashable {
        public var name: String
        public var dependsOn: [String]
        /// How many replicas the store is meant to have; at least 1. Checked for form only: the coordinator does not
        /// yet enforce it or flag stores with fewer.
        public var replicas: Int

        public init(name: String, dependsOn: [String] = [], replicas: Int = 1) {
            self.name = name
            self.dependsOn = dependsOn
            self.replicas = replicas
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            name = try container.decode(String.self, forKey: .name)
            dependsOn = try container.decodeIfPresent([String].self, forKey: .dependsOn) ?? []
            replicas = try container.decodeIfPresent(Int.self, forKey: .replicas) ?? 1
        }
    }

    public var stores: [Store]

    public init(stores: [Store]) { self.stores = stores }

    /// The pinned store of a name, if any.
    public func store(named name: String) -> Store? { stores.first { $0.name == name } }

    /// Reads and checks a topology file.
    /// - Throws: `BusError` (`usage`) naming the file and the problem: unreadable, not JSON of this shape, a name no
    ///   worker can declare, or a graph with a cycle, an unknown dependency or a duplicate name.
    public static func load(from path: String) throws -> Topology {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw BusError(code: .usage, message: "cannot read topology file \(path): \(error.localizedDescription)")
        }
        let topology: Topology
        do {
            topology = try JSONDecoder().decode(Topology.self, from: data)
        } catch {
            throw BusError(
                code: .usage,
                message: "topology file \(path) is not valid: \(error). Expected "
                    + #"{"stores": [{"name": "a", "dependsOn": ["b"], "replicas": 1}, ...]}"#)
        }
        try topology.validate(source: path)
        return topology
    }

    /// Checks the pinned graph itself.
    public func validate(source: String = "topology") throws {
        // A name no worker may declare would pin a store that never joins.
        for name in stores.flatMap({ [$0.name] + $0.dependsOn }) where !BusName.isValid(name) {
            throw BusError(code: .usage, message: "\(source): `\(name)` is not a store name a worker can declare: use 1 to 64 "
                + "ASCII letters, digits, '.', '_' or '-'")
        }
        for store in stores where store.replicas < 1 {
            throw BusError(code: .usage, message: "\(source): store `\(store.name)` needs at least 1 replica")
        }
        do {
            _ = try DependencyGraph(stores.map { .init(name: $0.name, dependsOn: $0.dependsOn) })
        } catch {
            throw BusError(code: .usage, message: "\(source): \(error)")
        }
    }
}
