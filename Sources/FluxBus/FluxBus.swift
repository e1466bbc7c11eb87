import Flux
import FluxBusProtocol
import ZeroMQ

/// The distributed dispatcher's namespace (filled by the bus issues).
public enum FluxBusInfo {
    /// The libzmq version this build links against.
    public static var zeroMQVersion: String { ZeroMQVersion.current.description }
}
