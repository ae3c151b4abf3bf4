import ActivityDomain
import Foundation
import IndexingWorkload

/// What the benchmarks index and query: generated items (fixed seed), and a
/// store holding them, built once per benchmark in its setup (indexing it is
/// not what those benchmarks measure).
final class Fixture: @unchecked Sendable {
    // `@unchecked`: `cursor` is only touched by the benchmark's own thread,
    // one iteration at a time; the rest is immutable.
    static let indexedCount = 20_000

    /// The items a batch-indexing iteration indexes: the same 10,000 every run.
    static let items: [SearchableItem] = {
        var generator = ItemGenerator(seed: 1)
        return generator.items(10_000)
    }()

    private static let prefix = "bench-index-fixture-"
    /// Stores this process made, for teardown: only its own, since another
    /// benchmark run may share the temporary directory.
    private static let made = Made()

    let store: ActivityStore
    let path: String
    /// Queries run at a fixed time, well inside the items' default expiration.
    let now = Date()
    private var cursor = 0

    init() throws {
        path = FileManager.default.temporaryDirectory.appendingPathComponent(Self.prefix + UUID().uuidString).path
        Self.made.add(path)
        store = try IndexingRun.makeStore(path: path, durability: .noSync)
        var generator = ItemGenerator(seed: 2)
        for _ in 0..<(Self.indexedCount / 5_000) {
            try IndexingRun.index(generator.items(5_000), batchSize: 5_000, into: store)
        }
    }

    /// The next index into a query list of `count`, round and round.
    func nextQuery(of count: Int) -> Int {
        defer { cursor = (cursor + 1) % count }
        return cursor % count
    }

    /// Removes the stores this process made.
    static func removeAll() {
        for path in made.take() { try? FileManager.default.removeItem(atPath: path) }
    }

    private final class Made: @unchecked Sendable {
        // `@unchecked`: `paths` is accessed holding `lock`.
        private let lock = NSLock()
        private var paths: [String] = []

        func add(_ path: String) {
            lock.lock()
            paths.append(path)
            lock.unlock()
        }

        func take() -> [String] {
            lock.lock()
            defer { lock.unlock() }
            defer { paths = [] }
            return paths
        }
    }
}
