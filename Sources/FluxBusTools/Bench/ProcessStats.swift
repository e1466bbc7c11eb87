import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// What Linux's /proc says about one process: CPU time used and memory.
public struct ProcessStats: Sendable, Codable, Hashable {
    /// User plus system CPU time, in seconds (utime + stime in /proc/PID/stat).
    public let cpuSeconds: Double
    /// The resident set now, in bytes (VmRSS).
    public let residentBytes: Int
    /// The peak resident set, in bytes (VmHWM).
    public let peakResidentBytes: Int

    /// Reads the figures for a process id; nil when it is gone or /proc is not there.
    public static func read(pid: Int32) -> ProcessStats? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return nil }
        // Fields after the command name, which may hold spaces, start at field 3 (state); utime and stime are 14, 15.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 12, let utime = Double(fields[11]), let stime = Double(fields[12]) else { return nil }
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        return ProcessStats(
            cpuSeconds: (utime + stime) / ticks,
            residentBytes: kilobytes("VmRSS", in: status) * 1024,
            peakResidentBytes: kilobytes("VmHWM", in: status) * 1024)
    }

    private static func kilobytes(_ key: String, in status: String) -> Int {
        for line in status.split(separator: "\n") where line.hasPrefix(key + ":") {
            return Int(line.dropFirst(key.count + 1).split(whereSeparator: { $0 == " " || $0 == "\t" }).first ?? "") ?? 0
        }
        return 0
    }
}

/// The machine a run happened on, for the JSON report.
public struct MachineInfo: Sendable, Codable, Hashable {
    public let cores: Int
    public let cpuModel: String
    public let memoryBytes: UInt64
    public let kernel: String
    public let swiftVersion: String
    public let date: String

    public static func current() -> MachineInfo {
        let cpuinfo = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
        let model = cpuinfo.split(separator: "\n").first { $0.hasPrefix("model name") }
            .map { $0.split(separator: ":", maxSplits: 1).last.map { $0.trimmingCharacters(in: .whitespaces) } ?? "" } ?? "unknown"
        var name = utsname()
        uname(&name)
        let release = withUnsafeBytes(of: &name.release) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        let formatter = ISO8601DateFormatter()
        return MachineInfo(
            cores: ProcessInfo.processInfo.activeProcessorCount, cpuModel: model,
            memoryBytes: ProcessInfo.processInfo.physicalMemory, kernel: release, swiftVersion: swiftVersion,
            date: formatter.string(from: Date()))
    }

    /// The CPU time the hypervisor gave to others while this machine wanted it (`steal` in /proc/stat), in seconds
    /// summed over its CPUs since boot; nil off Linux or in a machine that does not count it.
    public static func stolenCPUSeconds() -> Double? {
        guard let stat = try? String(contentsOfFile: "/proc/stat", encoding: .utf8),
            let line = stat.split(separator: "\n").first(where: { $0.hasPrefix("cpu ") })
        else { return nil }
        // cpu user nice system idle iowait irq softirq steal …: steal is the eighth figure.
        let fields = line.split(separator: " ")
        guard fields.count > 8, let steal = Double(fields[8]) else { return nil }
        return steal / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// The compiler that built this binary, from the language-mode checks (the toolchain's exact string is not
    /// available at run time).
    static var swiftVersion: String {
        #if compiler(>=6.3)
        "Swift 6.3 or later (compiler)"
        #elseif compiler(>=6.2)
        "Swift 6.2"
        #else
        "Swift before 6.2"
        #endif
    }
}

extension ScenarioReport {
    /// The coordinator's CPU time between two readings, and its peak memory at the second; nothing when either is
    /// missing (a cluster not started here, without `--coordinator-pid`).
    mutating func recordCoordinator(from before: ProcessStats?, to after: ProcessStats?) {
        guard let before, let after else { return }
        coordinatorCPUSeconds = after.cpuSeconds - before.cpuSeconds
        coordinatorPeakRSSBytes = after.peakResidentBytes
    }
}
