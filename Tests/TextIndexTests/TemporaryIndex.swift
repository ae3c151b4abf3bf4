import Foundation
import LMDB
import TextIndex

/// An LMDB environment in a fresh temporary directory with a text index in
/// it; the directory is removed when the value is released.
final class TemporaryIndex {
    let directory: URL
    let environment: Environment
    let index: TextIndex

    init(durability: Durability = .noSync, prefix: String = "search.",
         contentReader: (@Sendable (UnsafeRawBufferPointer, ReadTransaction) throws -> TextIndex.Content)? = nil) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("textindex-\(UUID().uuidString)")
        var options = EnvironmentOptions()
        options.durability = durability
        environment = try Environment(path: directory.path, options: options)
        var index = try environment.write { txn in try TextIndex(openingIn: txn, prefix: prefix) }
        index.contentReader = contentReader
        self.index = index
    }

    deinit {
        try? FileManager.default.removeItem(at: directory)
    }

    /// Runs `body` with a writer in one write transaction, then flushes.
    func write(_ body: (TextIndexWriter) throws -> Void) throws {
        try environment.write { txn in
            let writer = index.writer(in: txn)
            try body(writer)
            try writer.flush()
        }
    }

    func search(_ text: String, now: Date = TemporaryIndex.now, limit: Int = 20) throws -> [SearchHit] {
        try environment.read { txn in try index.search(text, now: now, limit: limit, in: txn) }
    }

    func query(_ text: String, now: Date = TemporaryIndex.now) throws -> [SearchHit] {
        try environment.read { txn in try index.query(text, now: now, in: txn) }
    }

    func ids(_ hits: [SearchHit]) -> [String] { hits.map(\.identifier) }

    /// A fixed "now" for tests: 2026-11-22T10:00:00Z.
    static let now = Date(timeIntervalSince1970: 1_795_341_600)
}

extension IndexDocument {
    /// An item with a title and optional other fields.
    static func item(_ id: String, title: String? = nil, _ fields: [String: [String]] = [:],
                     attributes: [String: AttributeValue] = [:], expires: Date? = nil) -> IndexDocument {
        var f = fields
        if let title { f["title"] = [title] }
        return IndexDocument(kind: "item", identifier: id, fields: f, attributes: attributes, expirationDate: expires)
    }
}
