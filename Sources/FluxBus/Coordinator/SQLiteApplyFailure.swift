import Foundation

/// The first error of an application of journaled writes that ran on SQLite's queue (``ActionLog``): recorded there,
/// read on the coordinator's loop thread, which stops on it. Once set it stays: SQLite is missing those writes, so
/// nothing may be written after them.
final class SQLiteApplyFailure: @unchecked Sendable {
    private let lock = NSLock()
    private var first: (any Error)?

    var error: (any Error)? { lock.withLock { first } }

    func record(_ error: any Error) {
        lock.withLock { if first == nil { first = error } }
    }
}
