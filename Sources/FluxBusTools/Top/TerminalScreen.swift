import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The terminal as `top` uses it: the alternate screen with the cursor hidden, and standard input in non-canonical
/// mode without echo, so that a single `q` arrives at once. ``restore()`` puts everything back, and runs once.
public final class TerminalScreen {
    private var saved: termios?
    private var restored = false

    /// Whether standard output is a terminal.
    public static var isTerminal: Bool { isatty(STDOUT_FILENO) == 1 }

    /// Switches to the alternate screen, and stdin (when it is a terminal) to single keys without echo.
    public init() {
        var settings = termios()
        if isatty(STDIN_FILENO) == 1, tcgetattr(STDIN_FILENO, &settings) == 0 {
            saved = settings
            settings.c_lflag &= ~tcflag_t(ICANON | ECHO)
            withUnsafeMutableBytes(of: &settings.c_cc) { cc in
                cc[Int(VMIN)] = 0
                cc[Int(VTIME)] = 0
            }
            tcsetattr(STDIN_FILENO, TCSANOW, &settings)
        }
        write("\u{1B}[?1049h\u{1B}[?25l")
    }

    /// Draws rows from the top left, clearing what each row and the rest of the screen held before.
    public func draw(_ rows: [String]) {
        write("\u{1B}[H" + rows.map { $0 + "\u{1B}[K" }.joined(separator: "\r\n") + "\u{1B}[J")
    }

    /// The terminal's width in columns; 80 when it cannot be asked.
    public var width: Int {
        var size = winsize()
        return ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0 && size.ws_col > 0 ? Int(size.ws_col) : 80
    }

    /// Waits up to `milliseconds` for a key; true when it was `q` or `Q`.
    public func quitPressed(within milliseconds: Int32) -> Bool {
        guard saved != nil else {
            usleep(useconds_t(milliseconds) * 1000)
            return false
        }
        var waiting = pollfd(fd: STDIN_FILENO, events: Int16(POLLIN), revents: 0)
        guard poll(&waiting, 1, milliseconds) > 0 else { return false }
        var byte: UInt8 = 0
        return read(STDIN_FILENO, &byte, 1) == 1 && (byte == UInt8(ascii: "q") || byte == UInt8(ascii: "Q"))
    }

    /// Shows the cursor, leaves the alternate screen, and puts stdin's settings back.
    public func restore() {
        guard !restored else { return }
        restored = true
        write("\u{1B}[?25h\u{1B}[?1049l")
        if var saved { tcsetattr(STDIN_FILENO, TCSANOW, &saved) }
    }

    deinit { restore() }

    private func write(_ text: String) {
        FileHandle.standardOutput.write(Data(text.utf8))
    }
}
