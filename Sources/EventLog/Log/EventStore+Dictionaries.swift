import Foundation
import LMDB

extension EventStore {
    /// Trains a dictionary on the newest records (``DictionaryTrainer``),
    /// stores it under the next id in `dictionaries`, and compresses the
    /// records written from then on with it. Returns its id, or nil when
    /// the records share too little text to make one.
    ///
    /// ```swift
    /// if let id = try store.trainDictionary() { print("dictionary \(id)") }
    /// ```
    ///
    /// The store trains by itself (``StoreOptions/dictionaryTrainingBytes``)
    /// and `compact` trains before it rewrites the records; this is for a
    /// caller that wants one now.
    @discardableResult
    public func trainDictionary() throws -> UInt32? {
        try checkWritable(WriteOptions())
        guard let table = databases.dictionaryTable else { return nil }
        let (samples, id) = try environment.read { txn in
            (try dictionarySamples(in: txn), try nextDictionaryID(table, in: txn))
        }
        guard let bytes = DictionaryTrainer.train(samples, id: id) else { return nil }
        let dictionary = try ZstdDictionary(id: id, bytes: bytes)
        let stored = try environment.write { txn -> Bool in
            guard try nextDictionaryID(table, in: txn) == id else { return false }   // another process stored one meanwhile
            try table.put(bytes, forKey: LogDictionaries.key(id), in: txn)
            return true
        }
        guard stored else { return nil }
        databases.dictionaries.noteNewest(dictionary)
        options.logger.info("trained a dictionary for the log's payloads",
                            metadata: ["dictionary": "\(id)", "bytes": "\(bytes.count)", "samples": "\(samples.count)"])
        return id
    }

    /// The id after the last one in `dictionaries`.
    private func nextDictionaryID(_ table: Database<[UInt8], [UInt8]>, in txn: ReadTransaction) throws -> UInt32 {
        guard let last = try table.cursor(in: txn).lastBytes(), last.key.count == 4 else { return 1 }
        return UInt32(bigEndian: last.key.loadUnaligned(as: UInt32.self)) + 1
    }

    /// The newest records' payloads and owners, up to
    /// ``DictionaryTrainer/sampleBytes``: redacted records and the engine's
    /// own are left out.
    func dictionarySamples(in txn: ReadTransaction) throws -> [DictionaryTrainer.Sample] {
        try Self.dictionarySamples(databases, in: txn)
    }

    /// After a commit: trains a dictionary in the background when one is
    /// due (``LogDictionaries/trainingDue(stretch:)``), one at a time.
    func trainDictionaryIfDue() {
        guard let stretch = options.dictionaryTrainingBytes, databases.dictionaries.trainingDue(stretch: stretch),
              dictionaryTraining.begin() else { return }
        // Counted as a write, so that closing the store waits for it.
        guard (try? writes.enter()) != nil else {
            dictionaryTraining.end()
            return
        }
        Thread.detachNewThread { [self] in
            defer {
                dictionaryTraining.end()
                writes.leave()
            }
            do {
                if try trainDictionary() == nil { databases.dictionaries.trainingFailed(stretch: stretch) }
            } catch {
                databases.dictionaries.trainingFailed(stretch: stretch)
                options.logger.warning("training a dictionary failed", metadata: ["error": "\(error)"])
            }
        }
    }
}

extension EventStore {
    /// Dictionary `id` as stored (zstd's format), or nil: what a shipper
    /// copies to PostgreSQL beside the records that name it.
    public func dictionary(_ id: UInt32) throws -> [UInt8]? {
        guard let table = databases.dictionaryTable else { return nil }
        return try environment.read { txn in try table.get(LogDictionaries.key(id), in: txn) }
    }

    /// The dictionaries `records` name that this store does not hold, in
    /// order: what a follower fetches before it appends them.
    public func missingDictionaries(of records: [LogRecord]) throws -> [UInt32] {
        let named = Set(records.compactMap(\.dictionaryID).filter { $0 != 0 })
        guard !named.isEmpty else { return [] }
        guard let table = databases.dictionaryTable else { return named.sorted() }
        return try environment.read { txn in
            try named.sorted().filter { try table.get(LogDictionaries.key($0), in: txn) == nil }
        }
    }

    /// Stores dictionaries that arrived with records (a follower's, a
    /// restore's), in `batch`'s transaction, before the records that name
    /// them. A dictionary already held must be the same bytes.
    func storeDictionaries(_ dictionaries: [(id: UInt32, bytes: [UInt8])], in batch: LogBatch) throws {
        guard !dictionaries.isEmpty else { return }
        guard let table = databases.dictionaryTable else {
            throw EventLogError(.invalidArgument, operation: "append records", "this store has no `dictionaries` database (opened read-only?)")
        }
        for (id, bytes) in dictionaries {
            guard id != 0, Zstd.dictionaryID(bytes) == id || Zstd.dictionaryID(bytes) == 0 else {
                throw EventLogError(.invalidArgument, operation: "append records",
                                    "dictionary \(id) arrived with the id \(Zstd.dictionaryID(bytes)) in its header; allowed: its own id")
            }
            if let held = try table.get(LogDictionaries.key(id), in: batch.transaction) {
                guard held == bytes else {
                    throw EventLogError(.diverged, operation: "append records",
                                        "dictionary \(id) differs from the one this store holds under that id: the histories differ")
                }
                continue
            }
            _ = try ZstdDictionary(id: id, bytes: bytes)
            try table.put(bytes, forKey: LogDictionaries.key(id), in: batch.transaction)
        }
    }
}

extension EventStore {
    /// Copies every dictionary into `target` (a time travel's copy of the
    /// log, whose records name them).
    func copyDictionaries(into target: Environment, databases targetDatabases: LogDatabases) throws {
        guard let source = databases.dictionaryTable, let destination = targetDatabases.dictionaryTable else { return }
        let all = try environment.read { txn -> [([UInt8], [UInt8])] in
            var entries: [([UInt8], [UInt8])] = []
            let cursor = try source.cursor(in: txn)
            var entry = try cursor.firstBytes()
            while let (key, value) = entry {
                entries.append(([UInt8](key), [UInt8](value)))
                entry = try cursor.nextBytes()
            }
            return entries
        }
        guard !all.isEmpty else { return }
        try target.write { txn in
            for (key, value) in all { try destination.put(value, forKey: key, in: txn) }
        }
    }
}
