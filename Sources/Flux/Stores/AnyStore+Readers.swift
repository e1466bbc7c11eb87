/// The readers a worker calls on every dispatch, made once per store: each asks the type system its question (does the
/// state keep its digest, is the output optional) when the store is wrapped. A cast to a protocol per dispatch
/// (`as? any DigestedState`, `as? any OptionalOutput`) looked the conformance up each time, some 2,000 instructions of
/// a worker's 40,000 for a lock-step dispatch.
extension AnyStore {
    /// The digest a ``DigestedState`` keeps, or a reader of nil for any other state.
    static func digestReader<S: Store>(of store: S) -> () -> UInt64? {
        guard let digested = S.State.self as? any DigestedState.Type else { return { nil } }
        func reader<D: DigestedState>(_: D.Type) -> () -> UInt64? {
            { (store.state as! D).stateDigest }  // S.State is D: a cast of a value to its own type
        }
        return reader(digested)
    }

    /// The store's output, nil when it stands for "nothing published": always for ``NoOutput``, for a nil optional
    /// (``OptionalOutput``), never for any other type.
    static func outputReader<S: Store>(of store: S) -> () -> Value? {
        if S.Output.self == NoOutput.self { return { nil } }
        guard let optional = S.Output.self as? any OptionalOutput.Type else { return { .value(store.output()) } }
        func reader<O: OptionalOutput>(_: O.Type) -> () -> Value? {
            {
                let output = store.output()
                return (output as! O).isNone ? nil : .value(output)
            }
        }
        return reader(optional)
    }
}
