import Foundation

/// A directory under the system's temporary folder for one test, removed
/// by ``remove()``.
///
/// ```swift
/// let dir = TemporaryDirectory()
/// defer { dir.remove() }
/// let store = dir.sub("store")
/// let ops = try dir.file("ops.jsonl", [#"{"op":"deleteAllSearchableItems"}"#])
/// ```
public struct TemporaryDirectory: Sendable {
    public let path: String

    public init(_ label: String = "eventlog-test") {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("\(label)-\(UUID().uuidString)").path
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    public func remove() { try? FileManager.default.removeItem(atPath: path) }

    /// `name` inside the directory.
    public func sub(_ name: String) -> String { (path as NSString).appendingPathComponent(name) }

    /// Writes `lines` as a JSON Lines file and returns its path.
    public func file(_ name: String, _ lines: [String]) throws -> String {
        let path = sub(name)
        try (lines.joined(separator: "\n") + "\n").write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }
}
