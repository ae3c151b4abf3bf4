import Foundation
import LMDB
import Testing
import TextIndex

/// Spaces partition the index: a space reads, writes, ranks and removes its
/// own keys only, and answers exactly as an index that held only its
/// documents would.
@Suite("Spaces")
struct SpaceTests {
    /// Space ids with every byte position in play (1 and 256 differ in the
    /// third byte, `UInt32.max` is the last range of every database).
    static let spaces: [UInt32] = [0, 1, 2, 256, 0x0100_0000, UInt32.max]

    enum Operation {
        case upsert(IndexDocument)
        case remove(kind: String, identifier: String)
        case removeAll
        case flush

        func apply(to writer: TextIndexWriter) throws {
            switch self {
            case .upsert(let doc): try writer.upsert(doc)
            case .remove(let kind, let identifier): try writer.remove(kind: kind, identifier: identifier)
            case .removeAll: try writer.removeAll()
            case .flush: try writer.flush()
            }
        }
    }

    /// The keys and values of the index's databases whose key starts with
    /// `space`, without those 4 bytes.
    static func slice(_ dump: [String: [([UInt8], [UInt8])]], space: UInt32) -> [String: [([UInt8], [UInt8])]] {
        let prefix = withUnsafeBytes(of: space.bigEndian) { Array($0) }
        return dump.mapValues { rows in rows.filter { $0.0.starts(with: prefix) }.map { (Array($0.0.dropFirst(4)), $0.1) } }
    }

    static func same(_ a: [([UInt8], [UInt8])], _ b: [([UInt8], [UInt8])]) -> Bool {
        a.elementsEqual(b) { x, y in x.0 == y.0 && x.1 == y.1 }
    }

    /// One transaction of the shared index: a writer per space touched,
    /// made when the space is first touched, flushed in space-id order (what
    /// the keyword projection does).
    static func apply(_ operations: [(UInt32, Operation)], to index: TextIndex, in env: Environment) throws {
        try env.write { txn in
            var writers: [UInt32: TextIndexWriter] = [:]
            for (space, op) in operations {
                let writer = writers[space] ?? index.space(space).writer(in: txn)
                writers[space] = writer
                try op.apply(to: writer)
            }
            for space in writers.keys.sorted() { try writers[space]!.flush() }
        }
    }

    /// Random operations on several spaces that reuse kinds, identifiers and
    /// words, with replaces, removes, mid-transaction flushes and a space's
    /// `removeAll`. After every transaction, for every space, every read of
    /// the shared index equals that of an index that received only the
    /// space's calls (scores bit for bit), and so do the space's bytes.
    @Test(arguments: [(UInt64(1), 12), (UInt64(2), 40), (UInt64(3), 3)])
    func isolation(seed: UInt64, operationsPerTransaction: Int) throws {
        var rng = SeededGenerator(seed: seed)
        let shared = try TemporaryIndex()
        var alone: [UInt32: TemporaryIndex] = [:]
        for space in SpaceTests.spaces { alone[space] = try TemporaryIndex() }
        var compared = 0
        for round in 0..<10 {
            var operations: [(UInt32, Operation)] = []
            for _ in 0..<Int.random(in: 1...operationsPerTransaction, using: &rng) {
                let space = SpaceTests.spaces.randomElement(using: &rng)!
                let id = "d\(Int.random(in: 0..<30, using: &rng))"
                let roll = Int.random(in: 0..<100, using: &rng)
                if roll < 65 {
                    operations.append((space, .upsert(ExactnessTests.randomDocument(id, &rng))))
                } else if roll < 94 {
                    operations.append((space, .remove(kind: Bool.random(using: &rng) ? "item" : "activity", identifier: id)))
                } else if roll < 97 {
                    operations.append((space, .flush))
                } else if round > 2 {
                    operations.append((space, .removeAll))
                }
            }
            try SpaceTests.apply(operations, to: shared.index, in: shared.environment)
            for space in SpaceTests.spaces {
                let own = operations.filter { $0.0 == space }.map(\.1)
                guard !own.isEmpty else { continue }
                try alone[space]!.write { w in for op in own { try op.apply(to: w) } }
            }
            compared += try check(shared, alone)
        }
        #expect(compared > 300)
    }

    /// Every read of every space of `shared` against the index of that space
    /// alone; returns how many hits were compared.
    func check(_ shared: TemporaryIndex, _ alone: [UInt32: TemporaryIndex]) throws -> Int {
        var compared = 0
        let sharedDump = try DeterminismTests.dump(shared)
        for space in SpaceTests.spaces {
            let a = alone[space]!
            let scoped = shared.index.space(space)
            try shared.environment.read { txn in
                try a.environment.read { atxn in
                    for q in ExactnessTests.searches + ["d", "lat", "gatito", "i"] {
                        for limit in [2, 20] {
                            let got = try scoped.search(q, now: TemporaryIndex.now, limit: limit, in: txn)
                            let expected = try a.index.search(q, now: TemporaryIndex.now, limit: limit, in: atxn)
                            #expect(got == expected, "space \(space) search \(q) limit \(limit)")
                            compared += expected.count
                        }
                    }
                    for q in ExactnessTests.queries {
                        let got = try scoped.query(q, now: TemporaryIndex.now, in: txn)
                        let expected = try a.index.query(q, now: TemporaryIndex.now, in: atxn)
                        #expect(got == expected, "space \(space) query \(q)")
                        compared += expected.count
                    }
                    #expect(try scoped.statistics(in: txn) == a.index.statistics(in: atxn), "space \(space)")
                    let documents = try a.index.documents(in: atxn)
                    #expect(try scoped.documents(in: txn) == documents, "space \(space)")
                    for doc in documents.prefix(5) {
                        #expect(try scoped.document(kind: doc.kind, identifier: doc.identifier, in: txn) == doc)
                    }
                }
            }
            // The space's bytes are those of the index alone, after the space id.
            let mine = SpaceTests.slice(sharedDump, space: space)
            let theirs = SpaceTests.slice(try DeterminismTests.dump(a), space: 0)
            for name in DeterminismTests.names {
                let same = SpaceTests.same(mine[name]!, theirs[name]!)
                #expect(same, "space \(space) database \(name)")
            }
        }
        // No key outside the spaces written.
        let rows = sharedDump.values.reduce(0) { $0 + $1.count }
        let inSpaces = SpaceTests.spaces.reduce(0) { n, s in n + SpaceTests.slice(sharedDump, space: s).values.reduce(0) { $0 + $1.count } }
        #expect(rows == inSpaces)
        return compared
    }

    /// Spaces 3, 4 and 5 share identifiers and words; removing all of space
    /// 4 (more than one LMDB page in every database) leaves every key and
    /// value of 3 and 5 as it was, and nothing of 4.
    @Test func removeAllLeavesOtherSpacesByteForByte() throws {
        var rng = SeededGenerator(seed: 5)
        let t = try TemporaryIndex()
        for space: UInt32 in [3, 4, 5] {
            let docs = (0..<600).map { ExactnessTests.randomDocument("d\($0)", &rng) }
            try t.environment.write { txn in
                let w = t.index.space(space).writer(in: txn)
                for d in docs { try w.upsert(d) }
                try w.flush()
            }
        }
        let fresh = try TemporaryIndex()
        let before = try DeterminismTests.dump(t)
        // 600 documents: the open block, so in runs (pages of about 12 KB).
        #expect(SpaceTests.slice(before, space: 4)["runs"]!.count >= 3)
        try t.environment.write { txn in try t.index.space(4).writer(in: txn).removeAll() }
        let after = try DeterminismTests.dump(t)
        for name in DeterminismTests.names {
            #expect(SpaceTests.slice(after, space: 4)[name]!.isEmpty, "\(name)")
            for space: UInt32 in [3, 5] {
                let same = SpaceTests.same(SpaceTests.slice(before, space: space)[name]!, SpaceTests.slice(after, space: space)[name]!)
                #expect(same, "space \(space) database \(name)")
            }
            #expect(after[name]!.count == before[name]!.count - SpaceTests.slice(before, space: 4)[name]!.count)
        }
        let empty = try fresh.environment.read { try fresh.index.statistics(in: $0) }
        try t.environment.read { txn throws in
            #expect(try t.index.space(4).statistics(in: txn) == empty)
            #expect(try t.index.space(4).search("latte", now: TemporaryIndex.now, in: txn).isEmpty)
            #expect(try t.index.space(4).query(#"kind == "*""#, now: TemporaryIndex.now, in: txn).isEmpty)
            #expect(try t.index.space(3).statistics(in: txn).documentCount > 0)
        }
        // The space starts again from id 0, as a new index would.
        let doc = ExactnessTests.randomDocument("again", &rng)
        try t.environment.write { txn in
            let w = t.index.space(4).writer(in: txn)
            try w.upsert(doc)
            try w.flush()
        }
        try fresh.write { w in try w.upsert(doc) }
        let again = SpaceTests.slice(try DeterminismTests.dump(t), space: 4)
        let single = SpaceTests.slice(try DeterminismTests.dump(fresh), space: 0)
        for name in DeterminismTests.names {
            let same = SpaceTests.same(again[name]!, single[name]!)
            #expect(same, "\(name)")
        }
    }

    /// Query results over 2,000 documents take another path (a pass over
    /// the space's `ids` and expiration dates): still the space's own.
    @Test func largeQueryResultsStayInTheSpace() throws {
        var rng = SeededGenerator(seed: 17)
        let shared = try TemporaryIndex(), alone = try TemporaryIndex()
        let mine = (0..<4_400).map { ExactnessTests.randomDocument("n\($0)", &rng) }
        try shared.environment.write { txn in
            for space: UInt32 in [2, 4] {
                let w = shared.index.space(space).writer(in: txn)
                for i in 0..<1_200 { try w.upsert(ExactnessTests.randomDocument("n\(i)", &rng)) }
                try w.flush()
            }
            let w = shared.index.space(3).writer(in: txn)
            for d in mine { try w.upsert(d) }
            try w.flush()
        }
        try alone.write { w in for d in mine { try w.upsert(d) } }
        var large = 0
        for q in [#"kind == "item""#, #"title == "*""#, #"title != "latte*"c"#, #"expirationDate != "*""#] {
            let got = try shared.environment.read { try shared.index.space(3).query(q, now: TemporaryIndex.now, in: $0) }
            let expected = try alone.query(q)
            if expected.count > 2_000 { large += 1 }
            #expect(got == expected, "\(q)")
        }
        #expect(large >= 2)
    }

    /// The index as opened is space 0: its keys start with four zero bytes.
    @Test func openedIndexIsSpaceZero() throws {
        let t = try TemporaryIndex()
        #expect(t.index.spaceId == 0 && t.index.space(9).spaceId == 9 && t.index.space(9).space(0).spaceId == 0)
        try t.write { w in try w.upsert(.item("order-1", title: "Oat latte")) }
        try t.environment.write { txn in
            let w = t.index.space(9).writer(in: txn)
            try w.upsert(.item("order-1", title: "Oat latte"))
            try w.upsert(.item("order-2", title: "Chai"))
            try w.flush()
        }
        let dump = try DeterminismTests.dump(t)
        for name in DeterminismTests.names {
            #expect(dump[name]!.allSatisfy { $0.0.starts(with: [0, 0, 0, 0]) || $0.0.starts(with: [0, 0, 0, 9]) })
            // Two documents: their postings are in the open block's runs, none
            // sealed yet; `terms` is no longer written.
            #expect(SpaceTests.slice(dump, space: 9)[name]!.isEmpty == (name == "postings" || name == "blocks" || name == "terms"), "\(name)")
        }
        let zero = try t.search("latte"), scoped = try t.environment.read { try t.index.space(0).search("latte", now: TemporaryIndex.now, in: $0) }
        #expect(zero == scoped && zero.count == 1)
        // The same document, ranked with each space's statistics: latte is
        // rarer in space 9 (one document of two), so it scores higher there.
        let nine = try t.environment.read { try t.index.space(9).search("latte", now: TemporaryIndex.now, in: $0) }
        #expect(nine.count == 1 && nine[0].score > zero[0].score)
    }

    /// A search or query of a space with 1,000 documents reads exactly as
    /// many keys whether the store holds only that space or also 20,000
    /// documents in 50 other spaces (ids below and above it) that reuse its
    /// identifiers and words.
    @Test func costFollowsTheSpaceNotTheStore() throws {
        let target: UInt32 = 25
        func documents(seed: UInt64, count: Int) -> [IndexDocument] {
            var rng = SeededGenerator(seed: seed)
            return (0..<count).map { ExactnessTests.randomDocument("d\($0)", &rng) }
        }
        func fill(_ t: TemporaryIndex, space: UInt32, _ docs: [IndexDocument]) throws {
            var start = 0
            while start < docs.count {
                try t.environment.write { txn in
                    let w = t.index.space(space).writer(in: txn)
                    for d in docs[start..<min(start + 500, docs.count)] { try w.upsert(d) }
                    try w.flush()
                }
                start += 500
            }
        }
        let mine = documents(seed: 1000, count: 1_000)
        let alone = try TemporaryIndex(), crowded = try TemporaryIndex()
        try fill(alone, space: target, mine)
        for other in 0..<51 where other != Int(target) {
            try fill(crowded, space: UInt32(other), documents(seed: UInt64(other), count: 400))
        }
        try fill(crowded, space: target, mine)
        let total = try crowded.environment.read { txn in
            try (0..<51).reduce(UInt64(0)) { n, s in n + (try crowded.index.space(UInt32(s)).statistics(in: txn).documentCount) }
        }
        #expect(total >= 20_000)

        var compared = 0
        for q in ExactnessTests.searches + ["l", "d", "co"] {
            var a = ReadCost(), c = ReadCost()
            let x = try alone.environment.read { try alone.index.space(target).search(q, now: TemporaryIndex.now, cost: &a, in: $0) }
            let y = try crowded.environment.read { try crowded.index.space(target).search(q, now: TemporaryIndex.now, cost: &c, in: $0) }
            #expect(x == y, "\(q)")
            #expect(a == c && a.keys > 1, "search \(q): \(a.keys) keys alone, \(c.keys) in the crowded store")
            compared += x.count
        }
        for q in ExactnessTests.queries {
            var a = ReadCost(), c = ReadCost()
            let x = try alone.environment.read { try alone.index.space(target).query(q, now: TemporaryIndex.now, cost: &a, in: $0) }
            let y = try crowded.environment.read { try crowded.index.space(target).query(q, now: TemporaryIndex.now, cost: &c, in: $0) }
            #expect(x == y, "\(q)")
            #expect(a == c && a.keys > 2, "query \(q): \(a.keys) keys alone, \(c.keys) in the crowded store")
            compared += x.count
        }
        #expect(compared > 1_000)
    }
}
