/// A value that lives on an ``IOLoop``'s thread, with a handle that any thread or task may hold.
///
/// Use it to keep loop-confined state, such as sockets or a protocol engine, between calls of ``IOLoop/run(_:)``:
///
/// ```swift
/// let dealer = try await loop.run { scope in
///     let socket = try scope.socket(.dealer)
///     try socket.connect(endpoint)
///     return IOLoopBound(socket, scope: scope)
/// }
/// try await loop.run { _ in try dealer.value.send(Array("hello".utf8)) }
/// ```
///
/// Reading or writing ``value`` anywhere but on the loop's thread stops the program with a precondition failure.
/// The value is released wherever the last reference to the box goes; for sockets that is fine once the loop has
/// stopped, or if the loop never polls them.
public final class IOLoopBound<Value>: @unchecked Sendable {
    // @unchecked Sendable is sound: `storage` is read and written only through `value`, whose accessors check that
    // they run on `loop`'s thread, so the non-Sendable value never crosses to another thread while the loop runs.

    /// The loop whose thread owns the value.
    public let loop: IOLoop
    private var storage: Value

    /// Binds `value` to the loop of `scope`; being handed a scope proves this runs on that loop's thread.
    public init(_ value: Value, scope: IOLoopScope) {
        self.loop = scope.loop
        self.storage = value
    }

    /// The value. Only on the loop's thread.
    public var value: Value {
        get {
            precondition(loop.isCurrent, "IOLoopBound value read outside the thread of I/O loop \(loop.name)")
            return storage
        }
        set {
            precondition(loop.isCurrent, "IOLoopBound value written outside the thread of I/O loop \(loop.name)")
            storage = newValue
        }
    }
}
