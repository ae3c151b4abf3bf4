import ActivityDomain
import Foundation

/// Batches handed to writer threads one at a time, from a chunk of items
/// read or generated with the clock stopped.
///
/// Reading the corpus (gunzip, JSON parsing) is not part of indexing and the
/// peers load their items before timing, so it must not be timed; holding
/// the whole corpus would make peak memory grow with it. So items come a
/// chunk at a time: when a chunk runs out, the writers finish their batches,
/// the clock stops, the last of them loads the next chunk, the clock restarts.
final class BatchFeed: @unchecked Sendable {
    // `@unchecked`: every mutable member is accessed holding `condition`.
    private let condition = NSCondition()
    private let reader: CorpusReader?
    private var generator: ItemGenerator?
    private var generatorLeft: Int
    private var remaining: Int
    /// The item limit is below the source's own size (or its `limit`), so
    /// reaching it may cut the source short.
    private let limitBinds: Bool
    private let batchSize: Int
    private let chunkSize: Int

    private var chunk: [SearchableItem] = []
    private var cursor = 0
    /// The index in the source of the chunk's first item.
    private var chunkFirst = 0
    /// Writers holding a batch of the current chunk.
    private var busy = 0
    private var loading = false
    private var exhausted = false
    private var stopped = false
    private var loadError: (any Error)?

    /// Runs, timed, when the writers are done with a chunk and before the
    /// clock stops to load the next one: the index catching up, so that what
    /// the run measures is searchable, not only acknowledged.
    var beforePause: (() throws -> Void)?

    private let clock = ContinuousClock()
    private var timed: Duration = .zero
    private var runningSince: ContinuousClock.Instant?

    init(source: ItemSource, batchSize: Int, writers: Int, limit: Int?) throws {
        self.batchSize = max(1, batchSize)
        // Large chunks, so that the pause at a chunk's end (writers wait for
        // the slowest, the index catches up with the log alone on its core)
        // is rare: none within the corpus (73,443 items), three in the 4×
        // one. The peers hold every item. A whole number of batches, so that
        // no batch is cut short at a chunk boundary.
        let wanted = max(100_000, 4 * self.batchSize * max(1, writers))
        chunkSize = (wanted + self.batchSize - 1) / self.batchSize * self.batchSize
        switch source {
        case .corpus(let path, let sourceLimit):
            reader = try CorpusReader(path: path)
            generatorLeft = 0
            remaining = min(sourceLimit ?? .max, limit ?? .max)
            limitBinds = (limit ?? .max) < (sourceLimit ?? .max)
        case .generated(let count, let seed):
            reader = nil
            generator = ItemGenerator(seed: seed)
            generatorLeft = count
            remaining = min(count, limit ?? .max)
            limitBinds = (limit ?? .max) < count
        }
    }

    /// The next batch (`first`: the index in the source of its first item),
    /// or nil when there is none left (or a writer failed).
    func next() throws -> (items: [SearchableItem], first: Int, textBytes: Int)? {
        condition.lock()
        defer { condition.unlock() }
        while true {
            if let loadError { throw loadError }
            if stopped { return nil }
            if cursor < chunk.count {
                let end = min(chunk.count, cursor + batchSize)
                let items = Array(chunk[cursor..<end])
                let first = chunkFirst + cursor
                cursor = end
                busy += 1
                return (items, first, items.reduce(0) { $0 + $1.textBytes })
            }
            if exhausted { return nil }
            if busy > 0 || loading {
                condition.wait()
                continue
            }
            // The last writer out of the chunk loads the next one, untimed.
            loading = true
            if let beforePause, runningSince != nil {
                condition.unlock()
                let waited = Result { try beforePause() }
                condition.lock()
                if case .failure(let error) = waited {
                    loading = false
                    loadError = error
                    condition.broadcast()
                    continue
                }
            }
            if let since = runningSince { timed += clock.now - since }
            runningSince = nil
            condition.unlock()
            let loaded = Result { try load() }
            condition.lock()
            loading = false
            switch loaded {
            case .success(let items):
                chunkFirst += chunk.count
                chunk = items
                cursor = 0
                if items.isEmpty { exhausted = true } else { runningSince = clock.now }
            case .failure(let error):
                loadError = error
            }
            condition.broadcast()
        }
    }

    /// A writer finished the batch `next()` gave it.
    func done() {
        condition.lock()
        busy -= 1
        if busy == 0 { condition.broadcast() }
        condition.unlock()
    }

    /// Ends the run early: a writer failed.
    func stop() {
        condition.lock()
        stopped = true
        busy = 0
        condition.broadcast()
        condition.unlock()
    }

    /// Time spent indexing, chunk loads excluded; call once the writers are done.
    func timedSeconds() -> Double {
        condition.lock()
        defer { condition.unlock() }
        var total = timed
        if let since = runningSince { total += clock.now - since }
        return total.seconds
    }

    /// Whether the item limit stopped the run while the source had more:
    /// the run was capped (the source's own `limit` is no cap).
    func hasMore() throws -> Bool {
        condition.lock()
        defer { condition.unlock() }
        guard remaining == 0, limitBinds else { return false }
        if let reader { return try reader.next(1) != nil }
        return generatorLeft > 0
    }

    private func load() throws -> [SearchableItem] {
        let wanted = min(chunkSize, remaining)
        guard wanted > 0 else { return [] }
        let items: [SearchableItem]
        if let reader {
            items = try reader.next(wanted) ?? []
        } else {
            items = generator!.items(wanted)
            generatorLeft -= items.count
        }
        remaining -= items.count
        return items
    }
}
