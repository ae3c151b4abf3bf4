import Foundation

/// How a `bench-setting` child tells its parent how far it is: a line
/// `progress N` on its stderr, at most five times a second, so that the
/// writes cost nothing measurable inside the timed loop. The parent reads
/// the child's stderr line by line and keeps every other line for errors.
final class ChildProgress: @unchecked Sendable {
    // `@unchecked`: `last` is accessed holding `lock`; writer threads report concurrently.
    private let lock = NSLock()
    private var last = ContinuousClock.now - .seconds(1)
    static let prefix = "progress "

    /// Called by the writer threads with the items indexed so far.
    func report(_ items: Int) {
        lock.lock()
        let now = ContinuousClock.now
        guard now - last >= .milliseconds(200) else {
            lock.unlock()
            return
        }
        last = now
        lock.unlock()
        FileHandle.standardError.write(Data("\(Self.prefix)\(items)\n".utf8))
    }

    /// The count of a progress line; nil for any other line.
    static func parse(_ line: Substring) -> Int? {
        guard line.hasPrefix(prefix) else { return nil }
        return Int(line.dropFirst(prefix.count))
    }
}
