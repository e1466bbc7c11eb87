import Flux
@testable import FluxBus
import FluxBusProtocol
import Foundation

/// A client that reads the ledger's state now and then, as `fluxbus state` does: STATE_REQUEST, then one PULL at a
/// time through the coordinator's relay until the state is whole (docs/PROTOCOL.md, "Transfers"). What arrives must
/// match its size and checksum and be the ledger the total order gives at its sequence; a transfer cut off (an
/// ERROR, a crash, a partition) is abandoned, and the next read starts afresh.
struct SimStateReader {
    var generation = 0
    let routingID = Array("reader".utf8)
    private var requests = 0
    private var transfer: (requestID: String, window: TransferWindow, header: Message.State, bytes: [UInt8])?
    /// The id being waited for (the STATE, or the CHUNK of the PULL in flight), and since when.
    private var waiting: (requestID: String, since: Int64)?
    /// Whole states read and checked, for the report.
    private(set) var reads = 0
    /// How long it waits for each answer before it reads afresh, in µs, as `fluxbus state --timeout` bounds each.
    var patience: Int64 = 2_000_000

    /// Starts a read, unless one is under way and not overdue.
    mutating func wake(at now: Int64, cluster: SimCluster) {
        if let waiting, now - waiting.since < patience { return }
        transfer = nil
        requests += 1
        let requestID = "read-\(requests)"
        waiting = (requestID, now)
        cluster.sendFromReader(.stateRequest(.init(requestID: requestID, store: SimLedger.name)))
    }

    mutating func receive(_ message: Message, at now: Int64, cluster: SimCluster) {
        switch message {
        case .state(let state) where state.requestID == waiting?.requestID:
            let window = TransferWindow(
                transfer: state.requestID, size: state.size, checksum: state.checksum, first: state.state, window: 1)
            transfer = (state.requestID, window, state, state.state)
            pullOrFinish(at: now, cluster: cluster)
        case .chunk(let chunk) where chunk.transfer == waiting?.requestID && transfer != nil:
            do {
                try transfer!.window.accept(chunk)
            } catch {
                return cluster.checker.fail("the coordinator relayed a CHUNK out of order: \(error)")
            }
            transfer!.bytes += chunk.bytes
            pullOrFinish(at: now, cluster: cluster)
        case .error(let error) where error.requestID == waiting?.requestID:
            // No live replica, a timeout, or the replica dropped the transfer: read again later.
            transfer = nil
            waiting = nil
        default:
            break
        }
    }

    private mutating func pullOrFinish(at now: Int64, cluster: SimCluster) {
        guard var current = transfer else { return }
        if let pull = current.window.pulls().first {
            transfer = current
            waiting = (current.requestID, now)
            return cluster.sendFromReader(.pull(pull))
        }
        transfer = nil
        waiting = nil
        guard UInt64(current.bytes.count) == current.header.size, current.window.checksumMatches else {
            return cluster.checker.fail("a state read through the coordinator does not match its size and checksum")
        }
        guard let ids = try? JSONDecoder().decode([UInt32].self, from: Data(current.bytes)) else {
            return cluster.checker.fail("a state read through the coordinator does not decode")
        }
        cluster.checker.readLedger(ids, at: current.header.sequence, from: current.header.worker)
        current.bytes = []
        reads += 1
    }
}
