/// A store's state taken at one moment, as a value that may cross threads: store states are `Codable & Sendable`
/// value types, so taking one is a copy-on-write copy, O(1). A worker takes it on its I/O thread at an exact
/// sequence and encodes it elsewhere, so a large state never holds up heartbeats.
package struct StoreStateCopy: Sendable {
    /// The state value, of the store's own `State` type.
    package let value: any Codable & Sendable

    package init(_ value: any Codable & Sendable) {
        self.value = value
    }

    /// The state as canonical JSON (sorted keys), as ``AnyStore/encodedState()`` gives it. Safe on any thread.
    package func encoded() throws -> [UInt8] { try JSONCoding.encode(value) }
}

extension Store {
    /// The state, copied (O(1): copy on write).
    package func stateCopy() -> StoreStateCopy { StoreStateCopy(state) }

    /// Puts back a copied state, if it is of this store's type.
    package func restoreState(_ copy: StoreStateCopy) {
        if let state = copy.value as? State { self.state = state }
    }
}
