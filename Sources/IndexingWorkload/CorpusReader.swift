import ActivityDomain
import Foundation

/// Streams searchable items from a JSON Lines file (`.gz` accepted), a
/// chunk at a time, so memory stays flat whatever the file's size.
///
/// A line is an item as SPEC §4 writes it (`{"uniqueIdentifier", "domainIdentifier",
/// "attributeSet": {…}}`) or in the flat shape of `shared/corpus/items.jsonl.gz`
/// (`title`, `displayName`, `contentDescription`, `keywords` at the top level).
///
/// ```swift
/// let reader = try CorpusReader(path: "../shared/corpus/items.jsonl.gz")
/// while let items = try reader.next(500) { try store.indexSearchableItems(items) }
/// ```
public final class CorpusReader {
    private let handle: FileHandle
    /// `gzip -dc FILE` for a `.gz` file (``ChildProcess``: `posix_spawn`,
    /// `waitpid`), whose standard output ``handle`` reads.
    private let gzip: ChildProcess?
    private var buffer = Data()
    /// Where the next line starts in `buffer`.
    private var offset = 0
    private var finished = false
    public private(set) var lineNumber = 0
    /// Bytes of JSON read so far: the input size for MB/s.
    public private(set) var bytesRead = 0
    public let path: String

    public init(path: String) throws {
        self.path = path
        guard FileManager.default.fileExists(atPath: path) else {
            throw WorkloadError("corpus \(path) does not exist")
        }
        if path.hasSuffix(".gz") {
            // Foundation on Linux has no gunzip; gzip(1) streams it. Its
            // messages (a damaged file) come back in the error.
            let gzip = try ChildProcess("/bin/gzip", ["-dc", path], standardOutput: .pipe, standardError: .pipe)
            self.gzip = gzip
            handle = gzip.output!
        } else {
            gzip = nil
            handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
        }
    }

    // Stopped early (a capped run), `gzip` goes with the reader: its
    // `deinit` kills it (SIGKILL, which no mask blocks: gzip, blocked on a
    // full pipe, never ends by itself) and reaps it.

    /// Up to `count` items; nil at the end.
    public func next(_ count: Int) throws -> [SearchableItem]? {
        var items: [SearchableItem] = []
        items.reserveCapacity(count)
        while items.count < count, let line = try nextLine() {
            lineNumber += 1
            bytesRead += line.count + 1
            if line.isEmpty { continue }
            do {
                items.append(try Self.item(from: line, lineNumber: lineNumber))
            } catch {
                // A damaged `.gz` can decompress to garbage before gzip
                // notices: its failure, not the line, is then the cause.
                try checkDecompressor(afterBadLine: lineNumber)
                throw error
            }
        }
        return items.isEmpty ? nil : items
    }

    /// Every item of the file.
    public static func readAll(path: String) throws -> [SearchableItem] {
        let reader = try CorpusReader(path: path)
        var all: [SearchableItem] = []
        while let chunk = try reader.next(10_000) { all += chunk }
        return all
    }

    private func nextLine() throws -> Data? {
        while true {
            // Lines are cut at an offset into the buffer: removing each line
            // from the front of a 1 MiB `Data` moved the rest every time
            // (gigabytes of memmove over the corpus).
            if let newline = buffer[offset...].firstIndex(of: 0x0A) {
                let line = Data(buffer[offset..<newline])
                offset = newline + 1
                return line
            }
            if finished {
                guard offset < buffer.endIndex else { return nil }
                defer { buffer.removeAll(); offset = buffer.startIndex }
                return Data(buffer[offset...])
            }
            if let more = try handle.read(upToCount: 1 << 20), !more.isEmpty {
                buffer.removeSubrange(buffer.startIndex..<offset)
                buffer.append(more)
                offset = buffer.startIndex
            } else {
                finished = true
                try checkDecompressor()
            }
        }
    }

    /// A damaged `.gz` ends the stream early: say so rather than index a
    /// prefix. With `afterBadLine`, reads the rest of the stream first, so
    /// that gzip ends and says whether the data was damaged.
    private func checkDecompressor(afterBadLine badLine: Int? = nil) throws {
        guard let gzip else { return }
        if badLine != nil {
            while let more = try handle.read(upToCount: 1 << 20), !more.isEmpty {}
        }
        let messages = String(decoding: (try gzip.errors?.readToEnd()) ?? Data(), as: UTF8.self)
            .split(whereSeparator: \.isNewline).joined(separator: "; ")
        let end = try gzip.wait()
        guard !end.succeeded else { return }
        var detail = "corpus \(path): \(gzip.command) \(end)"
        if !messages.isEmpty { detail += ": \(messages.prefix(500))" }
        if let badLine { detail += " (the data is damaged from line \(badLine))" }
        throw WorkloadError(detail)
    }

    static func item(from line: Data, lineNumber: Int) throws -> SearchableItem {
        if line.range(of: Data("\"attributeSet\"".utf8)) != nil {
            do {
                return try SearchableItem(json: try JSONValue(parsing: String(decoding: line, as: UTF8.self)))
            } catch {
                throw WorkloadError("corpus line \(lineNumber): \(error)")
            }
        }
        guard let object = try? JSONSerialization.jsonObject(with: line) as? [String: Any],
              let identifier = object["uniqueIdentifier"] as? String else {
            throw WorkloadError("corpus line \(lineNumber): not an item object with a uniqueIdentifier")
        }
        var item = SearchableItem(uniqueIdentifier: identifier, domainIdentifier: object["domainIdentifier"] as? String)
        item.attributeSet.title = object["title"] as? String
        item.attributeSet.displayName = object["displayName"] as? String
        item.attributeSet.contentDescription = object["contentDescription"] as? String
        item.attributeSet.keywords = object["keywords"] as? [String] ?? []
        return item
    }
}

/// A workload that cannot run: a missing corpus, a malformed line.
public struct WorkloadError: Error, CustomStringConvertible, Sendable {
    public var description: String
    public init(_ description: String) { self.description = description }
}
