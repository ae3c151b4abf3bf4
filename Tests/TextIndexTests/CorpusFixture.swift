import Foundation

/// One line of `shared/corpus/items.jsonl.gz`.
struct CorpusItem: Decodable, Sendable {
    var uniqueIdentifier: String
    var domainIdentifier: String
    var title: String
    var displayName: String
    var contentDescription: String
    var keywords: [String]
    var language: String
}

/// The shared corpus, found beside the repository (`../shared/corpus`), so
/// tests work in a fresh clone with `shared/` next to it.
enum CorpusFixture {
    static let directory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("shared/corpus")

    static let seeds = directory.deletingLastPathComponent().appendingPathComponent("seeds")

    /// Every item, decompressed with `/bin/gzip -dc` (Foundation on Linux has
    /// no gunzip), decoded once per process.
    static let loaded: Result<[CorpusItem], any Error> = Result { try load() }

    static func items() throws -> [CorpusItem] { try loaded.get() }

    private static func load() throws -> [CorpusItem] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/gzip")
        process.arguments = ["-dc", directory.appendingPathComponent("items.jsonl.gz").path]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let decoder = JSONDecoder()
        var items: [CorpusItem] = []
        items.reserveCapacity(80_000)
        var start = data.startIndex
        while start < data.endIndex {
            let end = data[start...].firstIndex(of: UInt8(ascii: "\n")) ?? data.endIndex
            if end > start { items.append(try decoder.decode(CorpusItem.self, from: data[start..<end])) }
            start = end + 1
        }
        return items
    }

    /// The 400 queries, one a line.
    static func queries() throws -> [String] {
        let text = try String(contentsOf: directory.appendingPathComponent("queries.txt"), encoding: .utf8)
        return text.split(separator: "\n").map { String($0) }.filter { !$0.isEmpty }
    }

    /// ASCII texts of the first items (titles, names, descriptions).
    static func asciiSamples(limit: Int) throws -> [String] {
        var out: [String] = []
        for item in try items().prefix(limit) {
            for s in [item.title, item.displayName, item.contentDescription] + item.keywords where s.utf8.allSatisfy({ $0 < 0x80 }) {
                out.append(s)
            }
        }
        return out
    }

    /// Text of a seed file.
    static func seed(_ prefix: String) throws -> String {
        let names = try FileManager.default.contentsOfDirectory(atPath: seeds.path)
        let name = names.first { $0.hasPrefix(prefix) }!
        return try String(contentsOf: seeds.appendingPathComponent(name), encoding: .utf8)
    }
}
