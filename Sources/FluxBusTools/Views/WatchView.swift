import FluxBus
import FluxBusProtocol

/// How `fluxbus watch` shows one state of a store.
public enum WatchView {
    /// `watch --json`: one object per line, keys sorted, with the replica's state bytes as they came (they are JSON).
    public static func json(_ state: Message.State) throws -> String {
        "{\"digest\":\"\(StateDigest.hex(state.digest))\",\"seq\":\(state.sequence),"
            + "\"state\":\(String(decoding: state.state, as: UTF8.self)),"
            + "\"store\":\(try ResultView.encode(state.store)),\"worker\":\(try ResultView.encode(state.worker))}"
    }

    /// `watch`: the sequence the state is at, then the state.
    public static func text(_ state: Message.State) -> String {
        "#\(state.sequence) " + String(decoding: state.state, as: UTF8.self)
    }
}
