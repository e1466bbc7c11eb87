/// A typed store: state, a map from action names to handlers, the stores it waits for, and an optional output
/// that the stores waiting for it can read.
///
/// The same store type runs in process under a ``Hub`` and, unchanged, on a worker of the distributed bus. That is
/// why its parts are declared rather than coded into a dispatch callback: the name and dependencies go into the
/// bus's global graph, the handled action names into its dispatch plans, and state and output are `Codable` so they
/// can cross processes.
///
/// ```swift
/// final class CountryStore: Store {
///     static let name = "country"
///     static let handlers = Handlers<CountryStore>()
///         .on(Flight.countryUpdate) { store, action, _ in store.state.country = action.payload.country }
///     var state = CountryState()
///     func output() -> CountryState? { state }
/// }
/// ```
public protocol Store: AnyObject, SendableMetatype {
    /// The store's state. `Codable` so that it can be snapshotted, digested and shown.
    associatedtype State: Codable & Sendable
    /// What the store publishes to the stores waiting for it: whatever ``output()`` returns, optional or not (a nil
    /// optional publishes nothing); ``NoOutput`` when the store declares no `output()`.
    associatedtype Output: Codable & Sendable = NoOutput

    /// The store's name: unique within a hub or a bus.
    static var name: String { get }
    /// The names of the stores this one waits for. Checked when the store is registered.
    static var dependencies: [String] { get }
    /// The handler for each action name this store handles.
    static var handlers: Handlers<Self> { get }

    /// Creates the store with its initial state. The hub (or a worker) calls this; it owns the instance.
    init()

    /// The current state. Settable so that a replica can be restored from a snapshot.
    var state: State { get set }

    /// The store's output after the current action, handed to the stores that wait for it.
    ///
    /// Declare it returning your output type, `-> Summary` or `-> Summary?`; both are this requirement, so a
    /// signature cannot silently miss it (the type becomes ``Output``).
    func output() -> Output
}

extension Store {
    /// By default a store waits for nothing.
    public static var dependencies: [String] { [] }
}

extension Store where Output == NoOutput {
    /// A store without an output publishes nothing.
    public func output() -> NoOutput { NoOutput() }
}

/// Lets a generic output say it is a nil optional.
package protocol OptionalOutput {
    var isNone: Bool { get }
}

extension Optional: OptionalOutput {
    package var isNone: Bool { self == nil }
}

/// The output type of a store that publishes none.
public struct NoOutput: Codable, Hashable, Sendable {
    public init() {}
}
