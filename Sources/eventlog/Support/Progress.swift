import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A one-line progress display on stderr, only when stderr is a terminal:
/// piped or redirected output stays quiet (and machine-readable).
final class Progress {
    private let enabled: Bool
    private var lastDraw = Date.distantPast
    private let start = Date()
    private var drawn = false

    init() {
        enabled = isatty(STDERR_FILENO) != 0
    }

    /// Redraws at most four times a second.
    func update(_ text: @autoclosure () -> String) {
        guard enabled else { return }
        let now = Date()
        guard now.timeIntervalSince(lastDraw) >= 0.25 else { return }
        lastDraw = now
        FileHandle.standardError.write(Data(("\r\u{1B}[K" + text()).utf8))
        drawn = true
    }

    /// Seconds since the display was made.
    var elapsed: TimeInterval { Date().timeIntervalSince(start) }

    /// Rate per second of `count` since the start.
    func rate(_ count: UInt64) -> String {
        let seconds = max(elapsed, 0.001)
        return String(format: "%.0f/s", Double(count) / seconds)
    }

    /// Clears the line so that what follows starts clean.
    func finish() {
        guard enabled, drawn else { return }
        FileHandle.standardError.write(Data("\r\u{1B}[K".utf8))
    }
}
