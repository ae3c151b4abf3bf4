import Foundation
import LMDB
import Testing
import TextIndex

/// Many users with a few dozen documents each: every space stays in its open
/// block, so all its postings live in runs (front-coded pages, merged by
/// level). Each space must still be exactly what the same groups give in an
/// index of that space alone (SPEC §9), and what is written must depend on
/// the groups (events) alone, not on how they were spread over transactions.
@Suite("Many small spaces", .serialized)
struct SmallSpacesTests {
    /// Space ids of the users, with every byte position in play.
    static let spaces: [UInt32] = [1, 2, 3, 7, 40, 255, 256, 300, 0x0001_0000, 0x0100_0000, 0x0100_0001, UInt32.max]

    /// One event of the keyword projection: the upserts and removals of one
    /// space, then the end of the group (flushed at once when it removed
    /// something, as ``KeywordIndexProjection`` does).
    struct Group {
        var space: UInt32
        var upserts: [IndexDocument] = []
        var removals: [String] = []
    }

    /// Corpus item i belongs to space `spaces[i % count]`, one group an item;
    /// every 11th group replaces an earlier document of its space with
    /// another item's text, every 17th removes one.
    static func groups(itemsPerSpace: Int) throws -> [Group] {
        let items = try CorpusFixture.items()
        let n = spaces.count * itemsPerSpace
        var groups: [Group] = []
        for i in 0..<n {
            let space = spaces[i % spaces.count]
            var group = Group(space: space, upserts: [CorpusTests.document(items[i])])
            if i % 11 == 10, i >= 10 * spaces.count {
                var replaced = CorpusTests.document(items[n + i])
                replaced.identifier = items[i - 10 * spaces.count].uniqueIdentifier
                group.upserts.append(replaced)
            }
            if i % 17 == 16, i >= 5 * spaces.count { group.removals.append(items[i - 5 * spaces.count].uniqueIdentifier) }
            groups.append(group)
        }
        return groups
    }

    /// Applies `groups` to `index` in transactions of `size` groups, one
    /// writer a space touched in a transaction (marking groups), flushed in
    /// space-id order at the transaction's end.
    static func apply(_ groups: some Collection<Group>, to t: TemporaryIndex, transactionSize size: Int) throws {
        var start = groups.startIndex
        while start < groups.endIndex {
            let end = groups.index(start, offsetBy: size, limitedBy: groups.endIndex) ?? groups.endIndex
            try t.environment.write { txn in
                var writers: [UInt32: TextIndexWriter] = [:]
                for group in groups[start..<end] {
                    let writer = writers[group.space] ?? t.index.space(group.space).writer(in: txn, marksGroups: true)
                    writers[group.space] = writer
                    for doc in group.upserts { try writer.upsert(doc) }
                    var removed = false
                    for id in group.removals where try writer.remove(kind: "item", identifier: id) { removed = true }
                    try writer.endGroup()
                    if removed { try writer.flush() }
                }
                for space in writers.keys.sorted() { try writers[space]!.flush() }
            }
            start = end
        }
    }

    @Test("transactions of 1, 7 and 5,000 events write the same bytes")
    func groupingDoesNotMatter() throws {
        let groups = try SmallSpacesTests.groups(itemsPerSpace: 90)
        var dumps: [[String: [([UInt8], [UInt8])]]] = []
        for size in [1, 7, 5_000] {
            let t = try TemporaryIndex()
            try SmallSpacesTests.apply(groups, to: t, transactionSize: size)
            dumps.append(try DeterminismTests.dump(t))
        }
        for name in DeterminismTests.names {
            let seven = SpaceTests.same(dumps[0][name]!, dumps[1][name]!)
            let all = SpaceTests.same(dumps[0][name]!, dumps[2][name]!)
            #expect(seven, "\(name): 1 against 7 a transaction")
            #expect(all, "\(name): 1 against 5,000 a transaction")
        }
        // The layout this is about: runs of several levels, some of several pages.
        let runs = dumps[0]["runs"]!
        var pagesPerRun: [[UInt8]: Int] = [:]
        for (key, _) in runs { pagesPerRun[Array(key.prefix(10)), default: 0] += 1 }
        #expect(pagesPerRun.count > 5 * SmallSpacesTests.spaces.count)
        #expect(pagesPerRun.values.contains { $0 >= 2 })
        #expect(dumps[0]["postings"]!.isEmpty && dumps[0]["blocks"]!.isEmpty)
    }

    @Test("each of many small spaces reads and stores what the space alone would")
    func eachSpaceAsAlone() throws {
        let groups = try SmallSpacesTests.groups(itemsPerSpace: 90)
        let shared = try TemporaryIndex()
        try SmallSpacesTests.apply(groups, to: shared, transactionSize: 500)
        let sharedDump = try DeterminismTests.dump(shared)
        let queries = try CorpusFixture.queries()
        var compared = 0
        for space in SmallSpacesTests.spaces {
            // The same events in an index of that user alone (its space id
            // there is 0), in transactions of another size.
            let alone = try TemporaryIndex()
            var own = groups.filter { $0.space == space }
            for k in own.indices { own[k].space = 0 }
            try SmallSpacesTests.apply(own, to: alone, transactionSize: 13)
            let mine = SpaceTests.slice(sharedDump, space: space)
            let theirs = SpaceTests.slice(try DeterminismTests.dump(alone), space: 0)
            for name in DeterminismTests.names {
                let same = SpaceTests.same(mine[name]!, theirs[name]!)
                #expect(same, "space \(space) database \(name)")
            }
            let scoped = shared.index.space(space)
            try shared.environment.read { txn in
                try alone.environment.read { atxn in
                    #expect(try scoped.statistics(in: txn) == alone.index.statistics(in: atxn))
                    for q in queries.prefix(120) + ["lib*", "a", "game::strategy"] {
                        let got = try scoped.search(q, now: TemporaryIndex.now, limit: 20, in: txn)
                        let expected = try alone.index.search(q, now: TemporaryIndex.now, limit: 20, in: atxn)
                        #expect(got == expected, "space \(space) search \(q)")
                        compared += expected.count
                    }
                    for q in [#"title == "lib*"c"#, #"displayName == "library"cdw"#, #"domainIdentifier == "libs""#] {
                        #expect(try scoped.query(q, now: TemporaryIndex.now, in: txn) == alone.index.query(q, now: TemporaryIndex.now, in: atxn))
                    }
                }
            }
        }
        #expect(compared > 1_000)
    }
}
