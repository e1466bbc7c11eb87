import Flux

/// A worker's hosted stores, found by name.
///
/// A worker asks for a store by name several times per action it applies, and it hosts a handful. Comparing a name
/// with a few others costs a fraction of hashing it once (a catching-up replica hashed four names per action), so a
/// small directory is scanned; a large one is a dictionary.
struct StoreDirectory {
    /// In the worker's order: a store's position is its index here.
    let all: [AnyStore]
    /// Nil while scanning costs less than hashing.
    private let positions: [String: Int]?

    /// Above this many stores, a name is hashed rather than compared with each.
    static let scanLimit = 8

    init(_ stores: [AnyStore]) {
        all = stores
        positions = stores.count > Self.scanLimit
            ? Dictionary(uniqueKeysWithValues: stores.enumerated().map { ($1.name, $0) }) : nil
    }

    /// The position of the store named `name`, nil when it is not hosted here.
    func index(of name: String) -> Int? {
        if let positions { return positions[name] }
        return all.firstIndex { $0.name == name }
    }

    subscript(name: String) -> AnyStore? {
        index(of: name).map { all[$0] }
    }

    func hosts(_ name: String) -> Bool { index(of: name) != nil }

    var names: some Sequence<String> { all.lazy.map(\.name) }
}
