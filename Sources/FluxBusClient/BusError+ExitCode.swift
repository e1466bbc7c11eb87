extension BusError.Code {
    /// The exit code a command-line program reports this failure with, as `fluxbus` and `WorkerMain` (in FluxBus) do: 2 usage,
    /// 3 unreachable or a protocol violation, 4 refused, 5 storage.
    public var exitCode: Int32 {
        switch self {
        case .usage: 2
        case .refused: 4
        case .storage: 5
        default: 3
        }
    }
}
