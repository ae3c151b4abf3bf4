import EventLog
import Foundation
import LMDB
import Testing
@testable import ActivityDomain

@Suite("Rebuilding the views from the log")
struct RebuildDeterminismTests {
    /// Every key and value of every database a projection set owns, read raw.
    static func contents(of views: ActivityViews, in environment: Environment) throws -> [String: [([UInt8], [UInt8])]] {
        try environment.read { txn in
            var result: [String: [([UInt8], [UInt8])]] = [:]
            for projection in views.all {
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
        let events = try store.eventStore.events(from: 1)
        var index = 0
        while index < events.count {
            let slice = events[index..<min(index + chunk, events.count)]
            try environment.write { txn in
                let writers = try views.all.map { try $0.makeWriter(in: txn) }
                for event in slice { for writer in writers { try writer.apply(event) } }
                for writer in writers { try writer.finish() }
            }
            index += chunk
        }
        return (environment, views)
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
            for step in 0..<2000 {
                _ = try? store.perform([generator.command(step: step)], at: at(Double(step)))
            }
            #expect(try store.head() > 500)
            let live = try Self.contents(of: store.views, in: store.eventStore.environment)
            #expect(live["activity.saved"]?.isEmpty == false || live["activity.savedRemovals"]?.isEmpty == false)
            // One event per transaction, and everything in one transaction.
            for (path, chunk) in zip(rebuildPaths, [1, 100_000]) {
                let (environment, views) = try Self.rebuild(from: store, into: path, chunk: chunk)
                Self.expectIdentical(live, try Self.contents(of: views, in: environment))
            }
        }
    }
}
