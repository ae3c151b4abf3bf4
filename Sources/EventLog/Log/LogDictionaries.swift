import Foundation
import LMDB

/// The zstd dictionaries of one environment's log, read from its
/// `dictionaries` database (id, 4 bytes big-endian → the dictionary in
/// zstd's format) and kept prepared once read: what decompresses a
/// record's payload (``RecordLayout/View``), and, in a store opened for
/// writing, the dictionary new records are compressed with.
///
/// A dictionary never changes once written under its id (new ones get the
/// next id; `compact` removes only those no record names), so one read is
/// good for the environment's life. One object an environment
/// (``of(_:)``), shared by every reader of it.
///
/// ```swift
/// let dictionaries = LogDictionaries.of(txn.environment)
/// try dictionaries.withPayload(of: view, at: position, in: txn) { payload in … }
/// ```
final class LogDictionaries: @unchecked Sendable {
    private let lock = NSLock()
    private var loaded: [UInt32: ZstdDictionary] = [:]
    private var database: Database<[UInt8], [UInt8]>?
    private var newest: ZstdDictionary?
    private weak var environment: Environment?

    private init(_ environment: Environment?) {
        self.environment = environment
    }

    /// The dictionaries of no environment: reads payloads that are not
    /// compressed or name no dictionary, and throws for the others.
    static let detached = LogDictionaries(nil)

    static let databaseName = "dictionaries"

    // MARK: One an environment

    private static let registryLock = NSLock()
    nonisolated(unsafe) private static var registry: [ObjectIdentifier: LogDictionaries] = [:]

    /// The dictionaries of `environment`'s log: the same object for every
    /// caller while the environment lives.
    static func of(_ environment: Environment) -> LogDictionaries {
        registryLock.withLock {
            let key = ObjectIdentifier(environment)
            if let found = registry[key], found.environment === environment { return found }
            registry = registry.filter { $0.value.environment != nil }
            let made = LogDictionaries(environment)
            registry[key] = made
            return made
        }
    }

    /// Notes the handle of the environment's `dictionaries` database, opened
    /// in a transaction that committed or reads (a handle is the
    /// environment's from then on).
    func adopt(_ database: Database<[UInt8], [UInt8]>) {
        lock.withLock { if self.database == nil { self.database = database } }
    }

    /// The handle, opening it in `txn` when none was noted (nil when the
    /// environment has no `dictionaries`: a store of format 1).
    private func handle(in txn: ReadTransaction?) throws -> Database<[UInt8], [UInt8]>? {
        if let known = lock.withLock({ database }) { return known }
        guard let txn, !(txn is WriteTransaction) else { return nil }
        do {
            let opened: Database<[UInt8], [UInt8]> = try txn.openDatabase(Self.databaseName)
            adopt(opened)
            return opened
        } catch LMDBError.notFound {
            return nil
        }
    }

    static func key(_ id: UInt32) -> [UInt8] { withUnsafeBytes(of: id.bigEndian) { [UInt8]($0) } }

    /// Dictionary `id`, read in `txn` (or in a read transaction of its own
    /// when `txn` is nil) the first time.
    func dictionary(_ id: UInt32, in txn: ReadTransaction?, position: Position) throws -> ZstdDictionary {
        if let found = lock.withLock({ loaded[id] }) { return found }
        let read: ([UInt8]?) = try {
            if let txn, let db = try handle(in: txn) { return try db.get(Self.key(id), in: txn) }
            guard let environment else { return nil }
            return try environment.read { own in try handle(in: own)?.get(Self.key(id), in: own) }
        }()
        guard let bytes = read else {
            throw EventLogError(.corrupt, operation: "read",
                                "the record's payload is compressed with dictionary \(id), which the store's `dictionaries` does not hold",
                                position: position)
        }
        let made: ZstdDictionary
        do {
            made = try ZstdDictionary(id: id, bytes: bytes)
        } catch {
            throw EventLogError(.corrupt, operation: "read", "dictionary \(id) is damaged: \(error)", position: position)
        }
        return lock.withLock {
            if let raced = loaded[id] { return raced }
            loaded[id] = made
            return made
        }
    }

    // MARK: Payloads

    /// Calls `body` with the payload of the record `view` (its canonical
    /// bytes: decompressed when stored compressed, in place otherwise). An
    /// undecodable stored payload is a corrupt record at `position`.
    func withPayload<R>(of view: RecordLayout.View, at position: Position, in txn: ReadTransaction?,
                        _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R {
        guard view.isCompressed else { return try body(view.storedPayload) }
        let compressed = try parse(view, at: position)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: compressed.payloadLength, alignment: 8)
        defer { buffer.deallocate() }
        try decompress(compressed, at: position, in: txn, into: buffer)
        return try body(UnsafeRawBufferPointer(buffer))
    }

    /// Decompresses the whole of `compressed`, the stored payload of the
    /// record at `position`, into `out`, of exactly its length.
    private func decompress(_ compressed: CompressedPayload, at position: Position, in txn: ReadTransaction?,
                            into out: UnsafeMutableRawBufferPointer) throws {
        let dictionary = try compressed.dictionaryID == 0 ? nil : self.dictionary(compressed.dictionaryID, in: txn, position: position)
        do {
            try compressed.decompress(blocks: 0..<compressed.blockCount, into: out, dictionary: dictionary)
        } catch let error as ZstdError {
            throw EventLogError(.corrupt, operation: "read", "the compressed payload does not decompress: \(error)", position: position)
        }
    }

    /// Calls `body` with bytes `range` of the record's payload, decompressing
    /// only the blocks that hold them, each once in a transaction: the
    /// blocks are kept in `txn`'s ``PayloadBlockCache`` for the next reads.
    /// Throws when `range` is past the payload.
    func withPayloadBytes<R>(of view: RecordLayout.View, _ range: Range<Int>, at position: Position, in txn: ReadTransaction?,
                             _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R {
        guard range.lowerBound >= 0, range.upperBound <= view.payloadLength else {
            throw EventLogError(.invalidArgument, operation: "read payload",
                                "bytes \(range) are past the end of the \(view.payloadLength)-byte payload", position: position)
        }
        guard view.isCompressed else { return try body(UnsafeRawBufferPointer(rebasing: view.storedPayload[range])) }
        guard !range.isEmpty else { return try body(UnsafeRawBufferPointer(start: nil, count: 0)) }
        // The block size from the stored header alone: the frames are parsed only when a block is not kept.
        let shift = try CompressedPayload.blockShift(of: view.storedPayload) ?? parse(view, at: position).blockShift
        let first = range.lowerBound >> Int(shift), last = (range.upperBound - 1) >> Int(shift)
        let cache = txn?.kept { PayloadBlockCache() }
        let digest = PayloadDigest(view.payloadDigest)
        var parsed: (payload: CompressedPayload, dictionary: ZstdDictionary?)?
        func block(_ index: Int) throws -> [UInt8] {
            let key = PayloadBlockCache.Key(position: position, index: index, shift: shift, digest: digest)
            if let kept = cache?.block(key) { return kept }
            if parsed == nil {
                let payload = try parse(view, at: position)
                parsed = (payload, try payload.dictionaryID == 0 ? nil : dictionary(payload.dictionaryID, in: txn, position: position))
            }
            let (payload, dictionary) = parsed!
            let span = payload.span(ofBlock: index)
            let bytes: [UInt8]
            do {
                bytes = try [UInt8](unsafeUninitializedCapacity: span.count) { out, count in
                    try payload.decompress(blocks: index..<(index + 1), into: UnsafeMutableRawBufferPointer(out), dictionary: dictionary)
                    count = span.count
                }
            } catch let error as ZstdError {
                throw EventLogError(.corrupt, operation: "read", "the compressed payload does not decompress: \(error)", position: position)
            }
            cache?.keep(bytes, key)
            return bytes
        }
        let base = first << Int(shift)
        if first == last {
            return try block(first).withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[(range.lowerBound - base)..<(range.upperBound - base)])) }
        }
        // Bytes across blocks: their blocks one after the other.
        var joined: [UInt8] = []
        joined.reserveCapacity(((last + 1) << Int(shift)) - base)
        for index in first...last { joined.append(contentsOf: try block(index)) }
        return try joined.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[(range.lowerBound - base)..<(range.upperBound - base)])) }
    }

    /// The payload of `view` as an array (decompressed into it, when stored compressed).
    func payload(of view: RecordLayout.View, at position: Position, in txn: ReadTransaction?) throws -> [UInt8] {
        guard view.isCompressed else { return [UInt8](view.storedPayload) }
        let compressed = try parse(view, at: position)
        return try [UInt8](unsafeUninitializedCapacity: compressed.payloadLength) { out, count in
            try decompress(compressed, at: position, in: txn, into: UnsafeMutableRawBufferPointer(out))
            count = compressed.payloadLength
        }
    }

    /// The event `view` holds, its payload decompressed.
    func event(of view: RecordLayout.View, at position: Position, in txn: ReadTransaction?) throws -> RecordedEvent {
        var event = view.event(at: position, payload: [])
        if !view.isRedacted { event.payload = try payload(of: view, at: position, in: txn) }
        return event
    }

    private func parse(_ view: RecordLayout.View, at position: Position) throws -> CompressedPayload {
        do {
            return try CompressedPayload(view.storedPayload, payloadLength: view.payloadLength)
        } catch let error as ZstdError {
            throw EventLogError(.corrupt, operation: "read", "the compressed payload is malformed: \(error.detail)", position: position)
        }
    }

    // MARK: Writing

    /// The dictionary new records are compressed with: the newest the
    /// store holds (``noteNewest(_:)``); nil before one was trained.
    var current: ZstdDictionary? { lock.withLock { newest } }

    /// The stored form of a new record's `payload`: compressed with the
    /// current dictionary (``CompressedPayload``), or nil when that would
    /// not make it smaller. Counts the bytes for ``sinceNewest``.
    func compressed(_ payload: [UInt8]) throws -> [UInt8]? {
        let dictionary = current
        let stored = try payload.withUnsafeBytes { try CompressedPayload.encode($0, dictionary: dictionary) }
        lock.withLock {
            written.payloadBytes += UInt64(payload.count)
            written.storedBytes += UInt64(stored?.count ?? payload.count)
        }
        return stored
    }

    /// What records written since the newest dictionary was noted took:
    /// their payloads' bytes and their stored bytes (how the trainer sees
    /// that the data drifted from what the dictionary was trained on).
    struct Written: Sendable {
        var payloadBytes: UInt64 = 0
        var storedBytes: UInt64 = 0
    }

    private var written = Written()

    /// ``Written`` since the newest dictionary was noted.
    var sinceNewest: Written { lock.withLock { written } }

    /// Makes `dictionary` the one new records use, unless a newer one is.
    func noteNewest(_ dictionary: ZstdDictionary) {
        lock.withLock {
            loaded[dictionary.id] = dictionary
            if (newest?.id ?? 0) < dictionary.id {
                newest = dictionary
                written = Written()
                baseline = nil
                attemptAfter = nil
            }
        }
    }

    // MARK: When to train

    private var baseline: Double?
    private var attemptAfter: UInt64?

    /// Whether the store should train a dictionary now, watching stretches
    /// of `stretch` payload bytes: with none, once that many were written
    /// (then four times more after each attempt that made none); with one,
    /// when a stretch compressed 15 % worse than the first stretch after it
    /// was noted (the data drifted from what it was trained on).
    func trainingDue(stretch: Int) -> Bool {
        lock.withLock {
            let threshold = attemptAfter ?? UInt64(stretch)
            guard newest != nil else { return written.payloadBytes >= threshold }
            guard written.payloadBytes >= UInt64(stretch) else { return false }
            let ratio = Double(written.storedBytes) / Double(max(written.payloadBytes, 1))
            written = Written()
            guard let baseline else {
                self.baseline = ratio
                return false
            }
            return ratio > baseline * 1.15
        }
    }

    /// An attempt to train made no dictionary: wait for four times more bytes.
    func trainingFailed(stretch: Int) {
        lock.withLock {
            attemptAfter = max(attemptAfter ?? UInt64(stretch), written.payloadBytes) * 4
            if newest != nil { written = Written() }
        }
    }

    /// Forgets every prepared dictionary (after `compact` removed some).
    func reset() {
        lock.withLock {
            loaded = [:]
            newest = nil
        }
    }
}
