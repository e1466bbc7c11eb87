/// A subscription to a ``ReduxStore``. It ends when ``cancel()`` is called or when it is deallocated, so keep it
/// for as long as you want to hear of changes.
public final class Subscription {
    private var onCancel: (() -> Void)?

    init(onCancel: @escaping () -> Void) {
        self.onCancel = onCancel
    }

    /// Ends the subscription. Calling it again does nothing.
    public func cancel() {
        onCancel?()
        onCancel = nil
    }

    /// Whether the subscription has been cancelled.
    public var isCancelled: Bool { onCancel == nil }

    deinit { cancel() }
}
