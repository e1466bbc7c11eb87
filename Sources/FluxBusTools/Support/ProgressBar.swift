import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A one-line progress bar on standard error, drawn only when standard error is a terminal: `fluxbus bench` and
/// `fluxbus dispatch --batch` show one.
package final class ProgressBar: Sendable {
    private let label: String
    private let lastPercent = Mutex(-1)

    /// A bar for `label`, or nil when standard error is not a terminal.
    package static func make(_ label: String) -> ProgressBar? {
        isatty(STDERR_FILENO) == 1 ? ProgressBar(label: label) : nil
    }

    private init(label: String) { self.label = label }

    /// Redraws the bar when the whole percentage changes.
    package func update(_ done: Int, of total: Int) {
        let percent = total > 0 ? done * 100 / total : 100
        guard lastPercent.withLock({ last in
            defer { last = percent }
            return last != percent
        }) else { return }
        let filled = percent * 30 / 100
        let bar = String(repeating: "#", count: filled) + String(repeating: " ", count: 30 - filled)
        FileHandle.standardError.write(Data("\r\(label.padding(toLength: 16, withPad: " ", startingAt: 0)) [\(bar)] \(percent)%".utf8))
    }

    /// Clears the line.
    package func finish() {
        FileHandle.standardError.write(Data("\r\(String(repeating: " ", count: 60))\r".utf8))
    }
}
