import Flux
import FluxBus

/// One `--store` argument of `fluxbus worker`: `NAME=KIND[,after=DEP+DEP][,handles=TYPE+TYPE]`.
///
/// - `NAME` is the store's name on the bus (see ``BusName``); `KIND` is a built-in kind (see ``StoreKind``).
/// - `after=` lists the stores it waits for, replacing the kind's own (`city` waits for `country` by default);
///   `after=` with nothing after it waits for none.
/// - `handles=` limits it to some of the action types its kind has handlers for.
///
/// ```
/// counter=counter
/// prices=price,after=city
/// settings=kv,handles=kv.set
/// ```
public struct StoreSpec: Sendable, Hashable, CustomStringConvertible {
    public let name: String
    public let kind: String
    /// The stores it waits for, or nil for its kind's default.
    public let dependencies: [String]?
    /// The action types it handles, or nil for all its kind handles.
    public let handles: [String]?

    /// Parses a spec.
    /// - Throws: ``StoreSpecError`` naming the part that is wrong and how to write it.
    public init(parsing text: String) throws(StoreSpecError) {
        let parts = text.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        let head = parts[0].split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
        guard head.count == 2 else {
            throw StoreSpecError(spec: text, problem: "it does not start with NAME=KIND")
        }
        let (name, kind) = (head[0], head[1])
        guard BusName.isValid(name) else {
            throw StoreSpecError(
                spec: text, problem: "the store name '\(name)' must be 1 to 64 letters, digits, '.', '_' or '-'")
        }
        guard let type = StoreKind.type(named: kind) else {
            throw StoreSpecError(
                spec: text,
                problem: "unknown kind '\(kind)'; the kinds are \(StoreKind.builtIn.map(\.name).joined(separator: ", "))")
        }
        var dependencies: [String]?
        var handles: [String]?
        for option in parts.dropFirst() {
            let pair = option.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
            guard pair.count == 2 else {
                throw StoreSpecError(spec: text, problem: "'\(option)' is not KEY=VALUE (after=… or handles=…)")
            }
            let values = pair[1].split(separator: "+").map(String.init)
            switch pair[0] {
            case "after":
                guard dependencies == nil else { throw StoreSpecError(spec: text, problem: "after= is given twice") }
                if let bad = values.first(where: { !BusName.isValid($0) }) {
                    throw StoreSpecError(spec: text, problem: "'\(bad)' in after= is not a valid store name")
                }
                guard !values.contains(name) else {
                    throw StoreSpecError(spec: text, problem: "a store cannot wait for itself")
                }
                dependencies = values
            case "handles":
                guard handles == nil else { throw StoreSpecError(spec: text, problem: "handles= is given twice") }
                let known = AnyStore.handledActions(of: type)
                if !known.all, let bad = values.first(where: { !known.names.contains($0) }) {
                    throw StoreSpecError(
                        spec: text,
                        problem: "kind '\(kind)' has no handler for '\(bad)'; it handles \(known.names.joined(separator: ", "))")
                }
                guard !values.isEmpty else {
                    throw StoreSpecError(spec: text, problem: "handles= needs at least one action type")
                }
                handles = values
            default:
                throw StoreSpecError(spec: text, problem: "unknown option '\(pair[0])'; use after= or handles=")
            }
        }
        self.name = name
        self.kind = kind
        self.dependencies = dependencies
        self.handles = handles
    }

    public var description: String {
        var text = "\(name)=\(kind)"
        if let dependencies { text += ",after=" + dependencies.joined(separator: "+") }
        if let handles { text += ",handles=" + handles.joined(separator: "+") }
        return text
    }
}

/// A `--store` spec that could not be parsed.
public struct StoreSpecError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The spec as given.
    public let spec: String
    /// What is wrong with it.
    public let problem: String

    public var description: String {
        "invalid --store '\(spec)': \(problem). The form is NAME=KIND[,after=DEP+DEP][,handles=TYPE+TYPE], "
            + "for example prices=price,after=city"
    }
}
