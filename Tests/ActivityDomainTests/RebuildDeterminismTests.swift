import EventLog
import Foundation
import LMDB
import Testing
@testable import ActivityDomain

@Suite("Rebuilding the views from the log")
struct RebuildDeterminismTests {
    /// Every key and value of every database a projection set owns, read raw.
    static func contents(of views: ActivityViews, in environment: Environment) throws -> [String: [([UInt8], [UInt8])]] {
        try contents(of: views.all, in: environment)
    }

    /// Every key and value of the store's index (in the index environment), once it applied the whole log.
    static func indexContents(of store: ActivityStore) throws -> [String: [([UInt8], [UInt8])]] {
        try store.eventStore.waitForIndex()
        return try contents(of: store.indexViews.all, in: try #require(store.eventStore.index).environment)
    }

    /// Every key and value of every database `projections` own, read raw.
    static func contents(of projections: [any Projection], in environment: Environment) throws -> [String: [([UInt8], [UInt8])]] {
        try environment.read { txn in
            var result: [String: [([UInt8], [UInt8])]] = [:]
            for projection in projections {
                for name in projection.databaseNames {
                    let db = try txn.openDatabase(name, as: [UInt8].self, [UInt8].self)
                    var entries: [([UInt8], [UInt8])] = []
                    let cursor = try db.cursor(in: txn)
                    var entry = try cursor.first()
                    while let (key, value) = entry {
                        entries.append((key, value))
                        entry = try cursor.next()
                    }
                    result[name] = entries
                }
            }
            return result
        }
    }

    /// Applies every event of `store` to a fresh projection set in another
    /// environment, in chunks of `chunk` events per transaction.
    static func rebuild(from store: ActivityStore, into path: String, chunk: Int) throws -> (Environment, ActivityViews) {
        var options = EnvironmentOptions()
        options.durability = .noSync
        options.maxDatabases = 128
        let environment = try Environment(path: path, options: options)
        let views = try environment.write { try ActivityViews(openingIn: $0) }
        try apply(store, to: views.all, in: environment, chunk: chunk)
        return (environment, views)
    }

    /// Applies every event of `store` to its index's projections opened in
    /// another environment, in chunks of `chunk` events per transaction,
    /// each writer preparing what it applies itself (no preparing thread).
    static func rebuildIndex(from store: ActivityStore, into path: String, chunk: Int) throws -> (Environment, ActivityIndex) {
        var options = EnvironmentOptions()
        options.durability = .noSync
        options.maxDatabases = 128
        let environment = try Environment(path: path, options: options)
        let index = try environment.write { try store.views.openIndex(in: $0) }
        try apply(store, to: index.all, in: environment, chunk: chunk)
        return (environment, index)
    }

    private static func apply(_ store: ActivityStore, to projections: [any Projection], in environment: Environment, chunk: Int) throws {
        let events = try store.eventStore.events(from: 1)
        var index = 0
        while index < events.count {
            let slice = events[index..<min(index + chunk, events.count)]
            // The log is the store's, as in the engine's rebuild: the new environment has none.
            try store.eventStore.environment.read { live in
                let log = store.eventStore.logReader(in: live)
                try environment.write { txn in
                    let writers = try projections.map { try $0.makeWriter(in: txn, log: log) }
                    for event in slice { for writer in writers { try writer.apply(event) } }
                    for writer in writers { try writer.finish() }
                }
            }
            index += chunk
        }
    }

    static func expectIdentical(_ a: [String: [([UInt8], [UInt8])]], _ b: [String: [([UInt8], [UInt8])]],
                                sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(a.keys.sorted() == b.keys.sorted(), sourceLocation: sourceLocation)
        for name in a.keys.sorted() {
            let left = a[name] ?? [], right = b[name] ?? []
            #expect(left.count == right.count, "\(name): \(left.count) vs \(right.count) entries: \(left.map(\.0)) vs \(right.map(\.0))", sourceLocation: sourceLocation)
            let firstDifference = Array(zip(left, right)).firstIndex { $0.0.0 != $0.1.0 || $0.0.1 != $0.1.1 }
            #expect(firstDifference == nil, "\(name) differs at entry \(firstDifference ?? -1)", sourceLocation: sourceLocation)
        }
    }

    @Test("after a random workload, a rebuild reproduces every view byte for byte, whatever the chunking")
    func byteIdenticalRebuild() throws {
        let rebuildPaths = [temporaryDirectory(), temporaryDirectory()]
        defer { for path in rebuildPaths { try? FileManager.default.removeItem(atPath: path) } }
        try withStore { store in
            var generator = RandomCommands(seed: 42)
            var outcomes = Outcomes()
            for step in 0..<2000 {
                try outcomes.run { _ = try store.write([generator.command(step: step)], at: at(Double(step))) }
            }
            #expect(outcomes.accepted >= 700 && outcomes.rejectedCount >= 200, "\(outcomes)")
            #expect(try store.head() > 500)
            let live = try Self.contents(of: store.views, in: store.eventStore.environment)
            #expect(live["activity.saved"]?.isEmpty == false || live["activity.savedRemovals"]?.isEmpty == false)
            let liveIndex = try Self.indexContents(of: store)
            // One event per transaction, and everything in one transaction.
            for (path, chunk) in zip(rebuildPaths, [1, 100_000]) {
                let (environment, views) = try Self.rebuild(from: store, into: path, chunk: chunk)
                Self.expectIdentical(live, try Self.contents(of: views, in: environment))
                let (indexEnvironment, index) = try Self.rebuildIndex(from: store, into: path + "-index", chunk: chunk)
                defer { try? FileManager.default.removeItem(atPath: path + "-index") }
                Self.expectIdentical(liveIndex, try Self.contents(of: index.all, in: indexEnvironment))
            }
        }
    }

    /// The keyword index writes an event's documents as one group, however
    /// many: an event of more than 4,096 items that opens its transaction is
    /// not cut in two (which a rebuild, where it follows other events, would
    /// not do), so its runs are the same either way.
    @Test("an event of more than 4,096 items gives the same runs first in its transaction or after others")
    func largeEventFirstInItsTransaction() throws {
        let rebuildPath = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: rebuildPath) }
        try withStore { store in
            let spotlight = store.user("")
            try spotlight.indexSearchableItems([makeItem("first", title: "a small event before")], at: at(0))
            let many = (0..<5_000).map { makeItem("item-\($0)", title: "word\($0 % 40) shared title \($0)") }
            try spotlight.indexSearchableItems(many, at: at(1))
            try spotlight.indexSearchableItems([makeItem("last", title: "a small event after")], at: at(2))
            let live = try Self.indexContents(of: store)
            #expect(live["search.runs"]?.isEmpty == false, "the test needs documents in the open block's runs")
            let (environment, index) = try Self.rebuildIndex(from: store, into: rebuildPath, chunk: 100_000)
            Self.expectIdentical(live, try Self.contents(of: index.all, in: environment))
        }
    }
}
