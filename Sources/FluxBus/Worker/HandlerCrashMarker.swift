import CCrashMarker
import Foundation
import FluxBusProtocol
import Synchronization

/// Where a worker's handlers arm a crash marker before they run: the shell's is a signal handler writing to a file,
/// the simulator's a record of what was armed.
protocol HandlerCrashMarking: AnyObject {
    func arm(store index: Int, sequence: UInt64)
    func disarm()
}

/// The file a worker's process writes when a store's handler kills it (a trap, a fault, an abort), read by the next
/// process under the same id, which reports it in HELLO (docs/OPERATIONS.md, "Poison actions"). It lives beside the
/// checkpoint with `--data-dir`, else in the temporary directory: it has to outlive a process, not a reboot.
///
/// Arming costs two stores and no syscall; the handler writes with `pwrite` into a file opened here. A signal handler
/// is the process's, so one worker of a process keeps a marker at a time (``claim(path:stores:)``); a second worker in
/// the same process (tests, or an unusual embedding) runs without one.
final class HandlerCrashMarker: HandlerCrashMarking {
    let path: String
    private let descriptor: Int32
    private static let held = Mutex(false)

    /// The marker for a worker, or nil when another worker of this process holds the process's one.
    static func claim(path: String, stores: [String]) throws -> HandlerCrashMarker? {
        guard held.withLock({ held in
            defer { held = true }
            return !held
        }) else { return nil }
        do {
            return try HandlerCrashMarker(path: path, stores: stores)
        } catch {
            held.withLock { $0 = false }
            throw error
        }
    }

    /// The marker file of worker `id`.
    static func path(worker id: String, directory: String?) -> String {
        let base = directory ?? NSTemporaryDirectory()
        return (base as NSString).appendingPathComponent(directory == nil ? "fluxbus-worker-\(id).crash" : "\(id).crash")
    }

    /// Reads what the previous process left (nil when it did not die in a handler), empties the file, names the
    /// stores, and installs the signal handler.
    /// - Throws: ``BusError`` (`storage`) when the file cannot be opened: a worker that could not count its crashes
    ///   would crash-loop on a poison action unseen.
    private init(path: String, stores: [String]) throws {
        self.path = path
        let previous = try? String(contentsOfFile: path, encoding: .utf8)
        descriptor = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            throw BusError(code: .storage, message: "cannot open the crash marker \(path): \(String(cString: strerror(errno))); "
                + "give --data-dir a writable directory")
        }
        report = previous.flatMap(Self.parse)
        for (index, name) in stores.enumerated() where index < 256 { fluxbus_crash_marker_name(Int32(index), name) }
        guard fluxbus_crash_marker_install(descriptor) == 0 else {
            throw BusError(code: .storage, message: "cannot install the crash marker's signal handler: \(String(cString: strerror(errno)))")
        }
    }

    /// What the previous process recorded, for HELLO.
    let report: HandlerCrash?

    func arm(store index: Int, sequence: UInt64) {
        guard index < 256 else { return }
        fluxbus_crash_marker_arm(Int32(index), sequence)
    }

    func disarm() { fluxbus_crash_marker_disarm() }

    deinit {
        fluxbus_crash_marker_release(descriptor)
        close(descriptor)
        Self.held.withLock { $0 = false }
    }

    /// `fluxbus-crash 1`, the sequence, the store and the signal, one per line; anything else is no report.
    static func parse(_ text: String) -> HandlerCrash? {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        // Four lines, each ended by a newline: a report the handler did not finish writing is none.
        guard lines.count == 5, lines[4].isEmpty, lines[0] == "fluxbus-crash 1", let sequence = UInt64(lines[1]), sequence > 0,
            !lines[2].isEmpty, !lines[3].isEmpty
        else { return nil }
        return HandlerCrash(sequence: sequence, store: String(lines[2]), signal: String(lines[3]))
    }
}
