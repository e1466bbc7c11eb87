/// The FluxBus wire protocol's version (placeholder until the codec lands).
public enum ProtocolVersion {
    public static let current: UInt8 = 1
}
