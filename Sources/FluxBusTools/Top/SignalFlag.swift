import Dispatch
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Raised by SIGINT or SIGTERM instead of the default of dying at once, so that `top` can put the terminal back
/// before it exits.
public final class SignalFlag: Sendable {
    private final class Raised: Sendable {
        let value = Atomic<Bool>(false)
    }

    private let raised = Raised()
    /// Only kept alive: set in init and never touched again, so sharing it across threads is safe.
    nonisolated(unsafe) private let sources: [any DispatchSourceSignal]

    /// Catches `signals` from now on.
    public init(_ signals: [Int32] = [SIGINT, SIGTERM]) {
        let raised = self.raised
        sources = signals.map { number in
            #if canImport(Darwin)
            // Darwin's sources see a signal through kqueue, alongside its disposition: ignore it there so it does not
            // kill the process. Linux's libdispatch handles the signal itself, and an ignored one would be dropped.
            signal(number, SIG_IGN)
            #endif
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { raised.value.store(true, ordering: .releasing) }
            source.resume()
            return source
        }
    }

    /// Whether one of the signals arrived.
    public var isRaised: Bool { raised.value.load(ordering: .acquiring) }
}
