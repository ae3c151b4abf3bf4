import Foundation
import LMDB
import Testing
import TextIndex

/// The open block's postings live in immutable runs, one a flush, merged
/// eight of a level into one of the next, and sealed into one value a term
/// when the block's last id is allocated. Searches and queries read every
/// run and answer exactly as before.
@Suite("Runs and merges")
struct RunTests {
    /// The run directory of `space` (key `space ‖ "runs"` of `meta`): the
    /// open block and each run's (start, level); nil when absent.
    static func directory(_ t: TemporaryIndex, space: UInt32 = 0) throws -> (block: UInt32, runs: [(start: Int, level: Int)])? {
        let dump = try DeterminismTests.dump(t)
        let key = withUnsafeBytes(of: space.bigEndian) { Array($0) } + Array("runs".utf8)
        guard let value = dump["meta"]!.first(where: { $0.0 == key })?.1 else { return nil }
        #expect(value[0] == 1)
        let block = value[1..<5].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        let count = Int(value[5])
        var runs: [(Int, Int)] = []
        for i in 0..<count {
            let at = 6 + 3 * i
            runs.append((Int(value[at]) << 8 | Int(value[at + 1]), Int(value[at + 2])))
        }
        #expect(value.count == 6 + 3 * count)
        return (block, runs)
    }

    /// The distinct (block, start) of the keys of database `runs`.
    static func runKeys(_ t: TemporaryIndex) throws -> [[UInt8]] {
        let rows = try DeterminismTests.dump(t)["runs"]!
        var seen: [[UInt8]] = []
        for row in rows where seen.last != Array(row.0.prefix(10)) { seen.append(Array(row.0.prefix(10))) }
        return seen
    }

    /// The sealed blocks that have values: in database `postings` (keys
    /// `space ‖ tier ‖ term`, 4 blocks a tier; a value's first byte says
    /// which blocks of the tier it holds) or `blocks` (`space ‖ block ‖ term`).
    static func sealedBlocks(_ t: TemporaryIndex) throws -> Set<UInt32> {
        let dump = try DeterminismTests.dump(t)
        var blocks = Set(dump["blocks"]!.map { $0.0[4..<8].reduce(UInt32(0)) { $0 << 8 | UInt32($1) } })
        for (key, value) in dump["postings"]! {
            let tier = key[4..<8].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            for sub in 0..<4 where value[0] & (1 << sub) != 0 {
                blocks.insert(tier << 2 | UInt32(sub))
            }
        }
        return blocks
    }

    static func documents(_ range: Range<Int>, seed: UInt64) -> [IndexDocument] {
        var rng = SeededGenerator(seed: seed)
        return range.map { ExactnessTests.randomDocument("n\($0)", &rng) }
    }

    static func expectSameSearches(_ a: TemporaryIndex, _ b: TemporaryIndex, sourceLocation: SourceLocation = #_sourceLocation) throws {
        var hits = 0
        for q in ExactnessTests.searches {
            for limit in [3, 1000] {
                let x = try a.search(q, limit: limit), y = try b.search(q, limit: limit)
                #expect(x == y, "search \(q) limit \(limit)", sourceLocation: sourceLocation)
                hits += x.count
            }
        }
        for q in ExactnessTests.queries {
            let x = try a.query(q), y = try b.query(q)
            #expect(x == y, "query \(q)", sourceLocation: sourceLocation)
            hits += x.count
        }
        #expect(hits > 100, sourceLocation: sourceLocation)
    }

    /// Every search and query of `ExactnessTests` against brute force over
    /// `model` and against a fresh index of it (one flush), with no limit
    /// on the hits (they run to thousands here); returns the hits found.
    static func check(_ t: TemporaryIndex, _ model: [String: IndexDocument], round: Int) throws -> Int {
        var found = 0
        let fresh = try TemporaryIndex()
        try fresh.write { w in for key in model.keys.sorted() { try w.upsert(model[key]!) } }
        let a = try t.environment.read { try t.index.statistics(in: $0) }
        let b = try fresh.environment.read { try fresh.index.statistics(in: $0) }
        #expect(a.documentCount == b.documentCount && a.totalLengths == b.totalLengths
                && a.documentsWithField == b.documentsWithField, "round \(round)")
        var tokenizer = Tokenizer()
        var terms: [String: Set<String>] = [:]
        for (key, doc) in model {
            var set = Set<String>()
            for (name, values) in doc.fields {
                for v in values { set.formUnion(tokenizer.indexTerms(v, keepWhole: name == "keywords")) }
            }
            terms[key] = set
        }
        for q in ExactnessTests.searches {
            let hits = try t.search(q, limit: 1_000_000)
            found += hits.count
            #expect(hits == (try fresh.search(q, limit: 1_000_000)), "search \(q), round \(round)")
            for limit in [1, 20] {
                #expect(try t.search(q, limit: limit) == Array(hits.prefix(limit)), "search \(q) limit \(limit), round \(round)")
            }
            var words = tokenizer.terms(q)
            let last = words.popLast()
            var expected = Set<String>()
            for (key, doc) in model where !doc.isExpired(at: ExactnessTests.now) {
                let set = terms[key]!
                if let last, words.allSatisfy(set.contains), set.contains(where: { $0.hasPrefix(last) }) { expected.insert(key) }
            }
            #expect(Set(hits.map { "\($0.kind)/\($0.identifier)" }) == expected, "search \(q), round \(round)")
        }
        for q in ExactnessTests.queries {
            let hits = try t.query(q)
            found += hits.count
            let expression = try QueryParser.parse(q, now: ExactnessTests.now)
            let expected = model.values.filter { !$0.isExpired(at: ExactnessTests.now) && BruteForce.matches($0, expression) }
                .map { SearchHit(kind: $0.kind, identifier: $0.identifier, score: 0) }
                .sorted { a, b in a.identifier != b.identifier ? a.identifier < b.identifier : a.kind < b.kind }
            #expect(hits == expected, "query \(q), round \(round)")
        }
        return found
    }

    @Test("each flush of new documents writes one run; the block is sealed when its last id is allocated")
    func runsThenSeal() throws {
        let docs = RunTests.documents(0..<4_396, seed: 3)
        let t = try TemporaryIndex()
        var flushes = 0
        for batch in stride(from: 0, to: docs.count, by: 500) {
            try t.write { w in for d in docs[batch..<min(batch + 500, docs.count)] { try w.upsert(d) } }
            flushes += 1
            let directory = try #require(try RunTests.directory(t))
            if flushes <= 8 {
                // 500 documents a flush: one run each, nothing sealed yet; eight runs
                // of 500 are not merged (that would make more than half a block,
                // soon sealed anyway).
                #expect(directory.block == 0)
                #expect(directory.runs.map(\.start) == (0..<flushes).map { $0 * 500 })
                #expect(directory.runs.allSatisfy { $0.level == 0 })
                #expect(try RunTests.runKeys(t).count == flushes)
                #expect(try RunTests.sealedBlocks(t).isEmpty)
            } else {
                // Ids 4,000 to 4,499: block 0 is full, so sealed; block 1 has one run.
                #expect(directory.block == 1)
                #expect(directory.runs.count == 1 && directory.runs[0].start == 0 && directory.runs[0].level == 0)
                #expect(try RunTests.sealedBlocks(t) == [0])
                let keys = try RunTests.runKeys(t)
                #expect(keys.count == 1 && keys[0] == [0, 0, 0, 0, 0, 0, 0, 1, 0, 0])
            }
        }
        // All at once: block 0 written sealed directly, block 1 as one run.
        let fresh = try TemporaryIndex()
        try fresh.write { w in for d in docs { try w.upsert(d) } }
        #expect(try RunTests.sealedBlocks(fresh) == [0])
        for name in ["postings", "blocks"] {
            #expect(try DeterminismTests.dump(fresh)[name]!.elementsEqual(try DeterminismTests.dump(t)[name]!) { $0.0 == $1.0 && $0.1 == $1.1 })
        }
        try RunTests.expectSameSearches(t, fresh)
    }

    @Test("eight runs of a level merge into one of the next")
    func mergeLevels() throws {
        let docs = RunTests.documents(0..<75, seed: 4)
        let t = try TemporaryIndex()
        for (i, d) in docs.enumerated() {
            try t.write { w in try w.upsert(d) }
            let runs = try #require(try RunTests.directory(t)).runs
            let n = i + 1
            // n in base 8: n / 64 runs of level 2, then (n / 8) % 8 of level 1, then n % 8 of level 0.
            var expected: [(Int, Int)] = []
            for k in 0..<(n / 64) { expected.append((k * 64, 2)) }
            for k in 0..<((n / 8) % 8) { expected.append((n / 64 * 64 + k * 8, 1)) }
            for k in 0..<(n % 8) { expected.append((n / 8 * 8 + k, 0)) }
            #expect(runs.map(\.start) == expected.map(\.0), "after \(n)")
            #expect(runs.map(\.level) == expected.map(\.1), "after \(n)")
        }
        let fresh = try TemporaryIndex()
        try fresh.write { w in for d in docs { try w.upsert(d) } }
        try RunTests.expectSameSearches(t, fresh)
        // Every run key belongs to one of the directory's runs: merged runs leave nothing behind.
        let starts = Set(try #require(try RunTests.directory(t)).runs.map(\.start))
        let keyStarts = Set(try RunTests.runKeys(t).map { Int($0[8]) << 8 | Int($0[9]) })
        #expect(keyStarts.isSubset(of: starts) && !keyStarts.isEmpty)
    }

    @Test("groups marked with endGroup write what a flush at each group's end writes")
    func groupsAreFlushes() throws {
        var rng = SeededGenerator(seed: 12)
        // Groups of 1 to 900 new documents, some replaced and removed, over three blocks.
        var groups: [[IndexDocument]] = []
        var n = 0
        while n < 10_000 {
            let size = [1, 1, 5, 64, 300, 900].randomElement(using: &rng)!
            groups.append((0..<size).map { _ in
                n += 1
                // Mostly new documents; one in ten replaces an earlier one.
                let id = Int.random(in: 0..<10, using: &rng) == 0 ? Int.random(in: 0..<n, using: &rng) : n
                return ExactnessTests.randomDocument("n\(id)", &rng)
            })
        }
        let flushed = try TemporaryIndex(), marked = try TemporaryIndex()
        try flushed.write { w in
            for g in groups {
                for d in g { try w.upsert(d) }
                try w.flush()
            }
        }
        // The same groups marked, flushed at the end of transactions of 1 to 40 groups
        // (and by the writer itself every 4,096 documents, at a group's end).
        var k = 0
        while k < groups.count {
            let count = Int.random(in: 1...40, using: &rng)
            try marked.write { w in
                for g in groups[k..<min(k + count, groups.count)] {
                    for d in g { try w.upsert(d) }
                    try w.endGroup()
                }
            }
            k += count
        }
        let a = try DeterminismTests.dump(flushed), b = try DeterminismTests.dump(marked)
        for name in DeterminismTests.names {
            #expect(a[name]!.count == b[name]!.count, "\(name)")
            #expect(a[name]!.elementsEqual(b[name]!) { $0.0 == $1.0 && $0.1 == $1.1 }, "\(name)")
        }
        #expect(try RunTests.sealedBlocks(flushed).count >= 2)
        #expect(try RunTests.directory(flushed)!.runs.count >= 2)
    }

    @Test("a run changed in place is paged exactly as the same postings written at once")
    func pagesDependOnContentAlone() throws {
        var rng = SeededGenerator(seed: 31)
        // Words of a 3,000-word vocabulary: runs of thousands of terms, so of many pages (about 12 KB each).
        func document(_ id: Int) -> IndexDocument {
            var doc = IndexDocument(kind: "item", identifier: "n\(id)")
            doc.fields["title"] = [(0..<Int.random(in: 1...24, using: &rng)).map { _ in "w\(Int.random(in: 0..<3_000, using: &rng))" }
                .joined(separator: " ")]
            return doc
        }
        let count = 1_800
        var groups: [Range<Int>] = []
        var n = 0
        while n < count {
            let size = min([1, 1, 3, 40, 300].randomElement(using: &rng)!, count - n)
            groups.append(n..<n + size)
            n += size
        }
        let finals = (0..<count).map(document)
        let removed = Set((0..<count).filter { _ in Int.random(in: 0..<8, using: &rng) == 0 })
        // Edited: every document first written as a draft, then changed in
        // flushes of 1 to 200 (other drafts, removals, final versions).
        let edited = try TemporaryIndex()
        for g in groups {
            let drafts = g.map(document)
            try edited.write { w in for d in drafts { try w.upsert(d) } }
        }
        var pending = Array(0..<count).shuffled(using: &rng)
        while !pending.isEmpty {
            let k = min(Int.random(in: 1...200, using: &rng), pending.count)
            let batch = pending.suffix(k)
            pending.removeLast(k)
            let churn = (0..<k / 3).map { _ in document(Int.random(in: 0..<count, using: &rng)) }
            try edited.write { w in
                for d in churn where !removed.contains(Int(d.identifier.dropFirst())!) { try w.upsert(d) }
                for i in batch {
                    if removed.contains(i) {
                        #expect(try w.remove(kind: "item", identifier: "n\(i)"))
                    } else {
                        try w.upsert(finals[i])
                    }
                }
            }
            // A churned document not finalized in this batch is finalized again later.
            for d in churn {
                let i = Int(d.identifier.dropFirst())!
                if !removed.contains(i) && !pending.contains(i) && !batch.contains(i) { pending.append(i) }
            }
        }
        // Written at once: the final versions in the same groups (so the same runs), then the removals.
        let direct = try TemporaryIndex()
        for g in groups {
            try direct.write { w in for i in g { try w.upsert(finals[i]) } }
        }
        try direct.write { w in
            for i in removed.sorted() {
                let gone = try w.remove(kind: "item", identifier: "n\(i)")
                #expect(gone)
            }
        }
        let a = try DeterminismTests.dump(edited)["runs"]!, b = try DeterminismTests.dump(direct)["runs"]!
        #expect(a.count == b.count)
        #expect(a.elementsEqual(b) { $0.0 == $1.0 && $0.1 == $1.1 })
        #expect(try RunTests.runKeys(direct).count >= 4)
        #expect(b.count > 20, "runs of many pages")
        // Every word and prefix is found in whatever page it is: against the documents.
        var containing: [String: Set<String>] = [:]
        for (i, doc) in finals.enumerated() where !removed.contains(i) {
            for word in doc.fields["title"]![0].split(separator: " ") { containing[String(word), default: []].insert(doc.identifier) }
        }
        func starting(_ p: String) -> Set<String> {
            containing.filter { $0.key.hasPrefix(p) }.values.reduce(into: Set<String>()) { $0.formUnion($1) }
        }
        for v in stride(from: 0, to: 3_000, by: 7) {
            let word = try direct.query("title == \"w\(v)\"w")
            #expect(Set(word.map(\.identifier)) == containing["w\(v)"] ?? [], "w\(v)")
            // A search's last word is a prefix.
            #expect(Set(try direct.search("w\(v)", limit: 10_000).map(\.identifier)) == starting("w\(v)"), "search w\(v)")
        }
        for p in ["w1", "w29", "w7", "w300", "w2999"] {
            let hits = try direct.query("title == \"\(p)*\"w")
            let expected = starting(p)
            #expect(Set(hits.map(\.identifier)) == expected, "\(p)*")
            #expect(Set(try direct.search(p, limit: 10_000).map(\.identifier)) == expected, "search \(p)")
        }
    }

    @Test("what is written depends on the flushes, not on how they are grouped into transactions")
    func flushesNotTransactions() throws {
        var rng = SeededGenerator(seed: 9)
        // Flushes of 1 to 700 operations over 6,000 ids (two blocks and a half), with replaces and removals.
        var flushes: [[(IndexDocument?, String)]] = []
        var next = 0
        while next < 9_000 {
            let n = [1, 3, 40, 700].randomElement(using: &rng)!
            flushes.append((0..<n).map { _ in
                let id = Int.random(in: 0..<6_000, using: &rng)
                next += 1
                return Int.random(in: 0..<10, using: &rng) == 0
                    ? (nil, "n\(id)") : (ExactnessTests.randomDocument("n\(id)", &rng), "n\(id)")
            })
        }
        func apply(_ f: [(IndexDocument?, String)], _ w: TextIndexWriter) throws {
            for (doc, id) in f {
                if let doc { try w.upsert(doc) } else {
                    try w.remove(kind: "item", identifier: id)
                    try w.remove(kind: "activity", identifier: id)
                }
            }
            try w.flush()
        }
        let a = try TemporaryIndex(), b = try TemporaryIndex()
        for f in flushes { try a.write { w in try apply(f, w) } }
        var k = 0
        while k < flushes.count {
            let group = flushes[k..<min(k + 37, flushes.count)]
            try b.write { w in for f in group { try apply(f, w) } }
            k += 37
        }
        let da = try DeterminismTests.dump(a), db = try DeterminismTests.dump(b)
        for name in DeterminismTests.names {
            #expect(da[name]!.elementsEqual(db[name]!) { $0.0 == $1.0 && $0.1 == $1.1 }, "\(name)")
        }
        #expect(try RunTests.sealedBlocks(a).count >= 1)
        #expect(try !RunTests.runKeys(a).isEmpty)
    }

    @Test("sealing the blocks of two tiers one by one writes what sealing them at once does; replaces and removals in sealed tiers stay exact")
    func tiers() throws {
        // Six blocks: tier 0 (blocks 0 to 3) complete, block 4 sealed alone, block 5 open.
        let docs = RunTests.documents(0..<(5 * 4_096 + 300), seed: 13)
        let t = try TemporaryIndex()
        for batch in stride(from: 0, to: docs.count, by: 1_500) {
            try t.write { w in for d in docs[batch..<min(batch + 1_500, docs.count)] { try w.upsert(d) } }
        }
        #expect(try RunTests.sealedBlocks(t) == [0, 1, 2, 3, 4])
        let fresh = try TemporaryIndex()
        try fresh.write { w in for d in docs { try w.upsert(d) } }
        let (a, b) = (try DeterminismTests.dump(fresh), try DeterminismTests.dump(t))
        for name in ["postings", "blocks"] {
            #expect(a[name]!.elementsEqual(b[name]!) { $0.0 == $1.0 && $0.1 == $1.1 }, "\(name)")
        }
        #expect(a["postings"]!.allSatisfy { $0.0[4..<8] == [0, 0, 0, 0] } && !a["postings"]!.isEmpty)
        #expect(a["blocks"]!.allSatisfy { $0.0[4..<8] == [0, 0, 0, 4] } && !a["blocks"]!.isEmpty)
        // Replace and remove documents of every sealed block (and the runs), then check against brute force.
        var rng = SeededGenerator(seed: 14)
        var model: [String: IndexDocument] = [:]
        for d in docs { model["\(d.kind)/\(d.identifier)"] = d }
        try t.write { w in
            for i in stride(from: 7, to: docs.count, by: 97) {
                let old = docs[i]
                if i % 3 == 0 {
                    #expect(try w.remove(kind: old.kind, identifier: old.identifier))
                    model["\(old.kind)/\(old.identifier)"] = nil
                } else {
                    var doc = ExactnessTests.randomDocument(old.identifier, &rng)
                    doc.kind = old.kind
                    try w.upsert(doc)
                    model["\(doc.kind)/\(doc.identifier)"] = doc
                }
            }
        }
        #expect(try RunTests.check(t, model, round: 0) > 100)
    }

    @Test("searches and queries across sealed blocks and runs equal brute force, with replaces and removals in both")
    func queriesAcrossRuns() throws {
        var rng = SeededGenerator(seed: 2026)
        let t = try TemporaryIndex()
        var model: [String: IndexDocument] = [:]
        var found = 0
        for round in 0..<40 {
            try t.write { w in
                // Flushes of every size, so that runs of every level, seals
                // and changes to sealed and running documents all occur.
                let n = [1, 2, 9, 60, 450, 900].randomElement(using: &rng)!
                for _ in 0..<n {
                    let roll = Int.random(in: 0..<100, using: &rng)
                    // New ids mostly, so that blocks fill; some replaced and removed.
                    let id = roll < 70 ? "n\(model.count + Int.random(in: 0..<100_000, using: &rng))"
                        : "n\(Int.random(in: 0..<100_000, using: &rng) % max(1, model.count))"
                    if roll < 90 {
                        var doc = ExactnessTests.randomDocument(id, &rng)
                        doc.kind = "item"
                        try w.upsert(doc)
                        model["item/\(id)"] = doc
                    } else if let key = model.keys.sorted().randomElement(using: &rng) {
                        let identifier = String(key.dropFirst(5))
                        #expect(try w.remove(kind: "item", identifier: identifier))
                        model[key] = nil
                    }
                }
            }
            if round % 8 == 7 || round == 39 {
                found += try RunTests.check(t, model, round: round)
            }
        }
        #expect(try RunTests.sealedBlocks(t).count >= 1)
        #expect(found > 1_000)
    }
}
