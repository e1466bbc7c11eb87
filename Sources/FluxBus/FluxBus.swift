// FluxBus includes the client: code that imports FluxBus sees BusClient, BusError and the CURVE settings as before.
@_exported import FluxBusClient
