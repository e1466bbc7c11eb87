import Foundation

/// The hostile peer (`Sources/FuzzPeer`, product `fluxbus-fuzz-peer`) and what the socket-level fuzz test reads off
/// the processes it attacks.
extension Cluster {
    /// The `fluxbus-fuzz-peer` executable that `swift build` put beside `fluxbus`.
    static var fuzzPeer: URL { binary.deletingLastPathComponent().appendingPathComponent("fluxbus-fuzz-peer") }

    /// A process's resident set size (`VmRSS` in `/proc/PID/status`), in KiB.
    static func residentKiB(of pid: Int32) throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
            let kib = Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
        else {
            throw ClusterError("no VmRSS in /proc/\(pid)/status:\n\(status)")
        }
        return kib
    }

    /// The last line of `NAME.log` that is a JSON object with `"message": message`, its values as strings (the form
    /// `--log-format json` writes metadata in).
    func jsonLogLine(_ name: String, message: String) -> [String: String]? {
        for line in log(name).split(separator: "\n").reversed() where line.hasPrefix("{") {
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                object["message"] as? String == message
            else { continue }
            return object.compactMapValues { $0 as? String }
        }
        return nil
    }
}
