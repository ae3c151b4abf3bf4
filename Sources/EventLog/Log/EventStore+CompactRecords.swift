import Foundation
import LMDB

/// What ``EventStore/rewriteRecordsCompact(path:options:)`` did.
public struct RecordRewrite: Sendable, Equatable {
    /// Records whose stored bytes changed.
    public var recordsRewritten = 0
    /// The stored bytes of every record, before and after.
    public var storedBytesBefore = 0
    public var storedBytesAfter = 0
    /// The dictionary the records are now compressed with; nil: none.
    public var dictionary: UInt32?
    /// Dictionaries no record names any more, removed.
    public var dictionariesRemoved: [UInt32] = []
}

extension EventStore {
    /// Rewrites every record of the store at `path` in the compact form:
    /// its payload compressed with a dictionary trained now on the log as
    /// it is (``DictionaryTrainer``; the newest one when none can be
    /// trained), records of format 1 made format 2, and removes the
    /// dictionaries no record names any more. Digests, links and positions
    /// do not change; nor does a redacted record, or one of the engine's
    /// own. Runs in write transactions of a few thousand records, while
    /// writers of other processes may write (a compaction then refuses to
    /// run beside them).
    ///
    /// ```swift
    /// let rewrite = try EventStore<Views>.rewriteRecordsCompact(path: dir)
    /// print(rewrite.storedBytesBefore, rewrite.storedBytesAfter)
    /// ```
    ///
    /// `compact(path:options:progress:)` calls it before it copies the file.
    @discardableResult
    public static func rewriteRecordsCompact(path: String, options: StoreOptions = StoreOptions()) throws -> RecordRewrite {
        let environment = try EnvironmentDirectory.log(path).open(options: options.environmentOptions(metrics: nil), operation: "compact")
        defer { environment.close() }
        return try rewriteRecordsCompact(in: environment, path: path)
    }

    /// ``rewriteRecordsCompact(path:options:)`` in an environment the caller opened.
    static func rewriteRecordsCompact(in environment: Environment, path: String) throws -> RecordRewrite {
        try EnvironmentDirectory.log(path).refuseForeign(environment, operation: "compact")
        let databases = try environment.write { txn in
            let databases = try LogDatabases(openingIn: txn)
            try databases.metadata.checkFormat(in: txn, path: path, operation: "compact")
            try databases.metadata.setFormat(.current, in: txn)
            return databases
        }
        guard let table = databases.dictionaryTable else { return RecordRewrite() }
        var result = RecordRewrite()
        // A dictionary trained on the log as it is now, else the newest.
        let (samples, nextID, newest) = try environment.read { txn -> ([DictionaryTrainer.Sample], UInt32, UInt32?) in
            let samples = try dictionarySamples(databases, in: txn)
            let last = try table.cursor(in: txn).lastBytes().flatMap { $0.key.count == 4 ? UInt32(bigEndian: $0.key.loadUnaligned(as: UInt32.self)) : nil }
            return (samples, (last ?? 0) + 1, last)
        }
        var dictionary: ZstdDictionary?
        if let bytes = DictionaryTrainer.train(samples, id: nextID) {
            dictionary = try ZstdDictionary(id: nextID, bytes: bytes)
            try environment.write { txn in try table.put(bytes, forKey: LogDictionaries.key(nextID), in: txn) }
        } else if let newest {
            dictionary = try environment.read { txn in try databases.dictionaries.dictionary(newest, in: txn, position: 0) }
        }
        result.dictionary = dictionary?.id
        // The records, a chunk a transaction.
        var named = Set<UInt32>()
        var next: Position = 1
        while true {
            let done = try environment.write { txn -> Bool in
                var walk = try LogWalk(databases, from: next, in: txn)
                var rewrites: [(Position, [UInt8])] = []
                var count = 0
                while count < 2_000, let (position, bytes) = try walk.next() {
                    count += 1
                    next = position + 1
                    let view = RecordLayout.View(bytes: bytes)
                    guard view.isWellFormed else {
                        throw EventLogError(.corrupt, operation: "compact", "the record is malformed", position: position)
                    }
                    result.storedBytesBefore += bytes.count
                    let rewritten = try compactForm(of: view, at: position, dictionary: dictionary, databases: databases, in: txn)
                    result.storedBytesAfter += rewritten?.count ?? bytes.count
                    let stored = rewritten ?? [UInt8](bytes)
                    try stored.withUnsafeBytes { raw in
                        let final = RecordLayout.View(bytes: raw)
                        if final.isCompressed {
                            named.insert(try CompressedPayload(final.storedPayload, payloadLength: final.payloadLength).dictionaryID)
                        }
                    }
                    if let rewritten { rewrites.append((position, rewritten)) }
                }
                for (position, bytes) in rewrites { try databases.log.put(bytes, forKey: position, in: txn) }
                result.recordsRewritten += rewrites.count
                return count < 2_000
            }
            if done { break }
        }
        // Dictionaries no record names.
        result.dictionariesRemoved = try environment.write { txn -> [UInt32] in
            var unused: [UInt32] = []
            let cursor = try table.cursor(in: txn)
            var entry = try cursor.firstBytes()
            while let (key, _) = entry {
                if key.count == 4 {
                    let id = UInt32(bigEndian: key.loadUnaligned(as: UInt32.self))
                    if !named.contains(id) && id != dictionary?.id { unused.append(id) }
                }
                entry = try cursor.nextBytes()
            }
            for id in unused { _ = try table.delete(LogDictionaries.key(id), in: txn) }
            return unused
        }
        databases.dictionaries.reset()
        return result
    }

    /// The record `view` in the compact form: format 2, its payload
    /// compressed with `dictionary` when that makes it smaller, else
    /// stored as it is. Nil when the record stays as it is: that form is
    /// not smaller than what it holds (a record of format 1 reads as an
    /// uncompressed one of format 2; one compressed with an older
    /// dictionary keeps it, so the dictionary stays), or it is redacted,
    /// or the engine's own.
    private static func compactForm(of view: RecordLayout.View, at position: Position, dictionary: ZstdDictionary?,
                                     databases: LogDatabases, in txn: ReadTransaction) throws -> [UInt8]? {
        guard !view.isRedacted, !view.type.starts(with: LogBatch.engineTypePrefix.utf8) else { return nil }
        let payload = try databases.dictionaries.payload(of: view, at: position, in: txn)
        let stored = try payload.withUnsafeBytes { try CompressedPayload.encode($0, dictionary: dictionary) }
        var out = [UInt8](repeating: 0, count: RecordLayout.size(typeLength: view.typeLength, payloadLength: stored?.count ?? payload.count))
        out.withUnsafeMutableBytes { out in
            payload.withUnsafeBytes { payload in
                if let stored {
                    stored.withUnsafeBytes { RecordLayout.rewrite(view, into: out, payload: payload, stored: $0) }
                } else {
                    RecordLayout.rewrite(view, into: out, payload: payload, stored: nil)
                }
            }
        }
        return out.count < view.bytes.count ? out : nil
    }

    /// The newest records' payloads and owners (``dictionarySamples(in:)``).
    static func dictionarySamples(_ databases: LogDatabases, in txn: ReadTransaction) throws -> [DictionaryTrainer.Sample] {
        var samples: [DictionaryTrainer.Sample] = []
        var bytes = 0
        let cursor = try databases.log.cursor(in: txn)
        var entry = try cursor.lastBytes()
        while let (key, value) = entry, bytes < DictionaryTrainer.sampleBytes {
            entry = try cursor.previousBytes()
            let view = RecordLayout.View(bytes: value)
            guard key.count == 8, view.isWellFormed, !view.isRedacted, view.payloadLength > 0,
                  !view.type.starts(with: LogBatch.engineTypePrefix.utf8) else { continue }
            let position = UInt64(bigEndian: key.loadUnaligned(as: UInt64.self))
            let event = try databases.event(view, at: position, in: txn)
            samples.append(DictionaryTrainer.Sample(owner: Views.dictionaryOwner(of: event), payload: event.payload))
            bytes += event.payload.count
        }
        return samples
    }
}
