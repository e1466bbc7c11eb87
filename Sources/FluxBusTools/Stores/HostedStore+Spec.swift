import FluxBus

extension HostedStore {
    /// Hosts a built-in kind as a `--store` spec describes it.
    public init(_ spec: StoreSpec) {
        self.init(StoreKind.type(named: spec.kind)!, name: spec.name, dependencies: spec.dependencies, handles: spec.handles)
    }
}
