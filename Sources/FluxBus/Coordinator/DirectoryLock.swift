import Foundation

/// An exclusive lock on a data directory, so that two coordinators never write one log. `flock` is released by the
/// kernel when the process dies, even by SIGKILL.
final class DirectoryLock {
    private let descriptor: Int32

    init(directory: String) throws {
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw BusError(code: .storage, message: "cannot create the data directory \(directory): \(error.localizedDescription). "
                + "Check its parent and permissions, or pass another --data-dir")
        }
        let path = (directory as NSString).appendingPathComponent("lock")
        descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            throw BusError(code: .storage, message: "cannot open \(path): \(String(cString: strerror(errno))). "
                + "Check the data directory's permissions, or pass another --data-dir")
        }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            let holder = (try? String(contentsOfFile: path, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
            close(descriptor)
            throw BusError(code: .storage, message: "the data directory \(directory) is in use by another coordinator"
                + (holder.isEmpty ? "" : " (pid \(holder))") + "; stop it, or give this one another --data-dir")
        }
        ftruncate(descriptor, 0)
        let pid = "\(getpid())\n"
        _ = pid.withCString { write(descriptor, $0, strlen($0)) }
    }

    deinit { close(descriptor) }
}
