/// Why a set of store declarations was refused by a ``DependencyGraph``.
///
/// The description names the stores involved and says what to change, for example
/// `dependency cycle: city -> price -> city; remove one of these waits`.
public struct GraphError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What kind of problem was found. New codes may be added later.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        public let description: String
        /// The declarations wait for each other in a ring.
        public static let cycle = Code(description: "cycle")
        /// A store waits for a name that no store has.
        public static let unknownDependency = Code(description: "unknown dependency")
        /// Two stores share a name.
        public static let duplicateName = Code(description: "duplicate name")
        /// A store name is empty.
        public static let emptyName = Code(description: "empty name")
    }

    /// What kind of problem was found.
    public let code: Code
    /// The store whose declaration was refused.
    public let store: String
    /// For a cycle, its path in waits-for order, starting and ending at the same store; for an unknown dependency,
    /// the missing name; otherwise empty.
    public let related: [String]

    public init(code: Code, store: String, related: [String] = []) {
        self.code = code
        self.store = store
        self.related = related
    }

    public var description: String {
        switch code {
        case .cycle:
            "dependency cycle: \(related.joined(separator: " -> ")); remove one of these waits"
        case .unknownDependency:
            "store `\(store)` waits for `\(related.first ?? "")`, which is not registered; "
                + "register it first or correct the name"
        case .duplicateName:
            "a store named `\(store)` is already registered; store names must be unique"
        case .emptyName:
            "a store name must not be empty"
        default:
            "store `\(store)`: \(code)"
        }
    }
}
