/// Names a kind of action and the payload type that travels with it.
///
/// ```swift
/// enum FlightActions {
///     static let countryUpdate = ActionType<CountryUpdate>("country-update")
/// }
/// try hub.dispatch(Action(FlightActions.countryUpdate, CountryUpdate(country: "France")))
/// ```
public struct ActionType<Payload: Codable & Sendable>: Hashable, Sendable, CustomStringConvertible {
    /// The action's name, as stores' handler maps and the wire know it.
    public let name: String

    /// Creates an action type with the given name.
    public init(_ name: String) { self.name = name }

    public var description: String { name }
}

/// The payload of an action that carries no data.
public struct NoPayload: Codable, Hashable, Sendable {
    public init() {}
}

/// An action: a name, a typed payload, and an optional error.
///
/// One action with an error replaces Flux's pairs of success and failure actions: a store handles
/// `Action(.loadFlights, flights)` and `Action(.loadFlights, [], error: ActionError("timed out"))` with one handler.
public struct Action<Payload: Codable & Sendable>: Sendable {
    /// The action's name.
    public let name: String
    /// The typed payload.
    public let payload: Payload
    /// Why the work behind this action failed, if it did.
    public let error: ActionError?

    /// Creates an action of a given type.
    public init(_ type: ActionType<Payload>, _ payload: Payload, error: ActionError? = nil) {
        self.name = type.name
        self.payload = payload
        self.error = error
    }
}

extension Action where Payload == NoPayload {
    /// Creates an action that carries no data.
    public init(_ type: ActionType<NoPayload>, error: ActionError? = nil) {
        self.init(type, NoPayload(), error: error)
    }
}

/// The error an action carries, or the error a store reports when its handler throws.
///
/// It is `Codable` so that it crosses processes unchanged.
public struct ActionError: Error, Codable, Hashable, Sendable, CustomStringConvertible {
    /// A human-readable account of what failed.
    public let message: String

    /// Creates an error with a message.
    public init(_ message: String) { self.message = message }

    /// Wraps any error, keeping an `ActionError` as it is.
    public init(describing error: any Error) {
        self.message = (error as? ActionError)?.message ?? String(describing: error)
    }

    public var description: String { message }
}
