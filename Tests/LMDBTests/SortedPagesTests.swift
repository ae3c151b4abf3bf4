import Foundation
import LMDB
import Testing

@Suite("SortedPages: sorted front-coded pages of keys")
struct SortedPagesTests {
    /// A random generator with a fixed seed (SplitMix64), so that a failure repeats.
    struct Seeded: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    typealias Change = (key: [UInt8], value: [UInt8]?)

    final class Fixture {
        let path = temporaryPath()
        let env: Environment
        let pages: SortedPages

        init(name: String = "pages") throws {
            var options = EnvironmentOptions()
            options.durability = .noSync
            env = try Environment(path: path, options: options)
            pages = SortedPages(try env.write { try $0.createDatabase(name, as: [UInt8].self, [UInt8].self) })
        }

        deinit { try? FileManager.default.removeItem(atPath: path) }

        func apply(_ changes: [Change], prefix: [UInt8]) throws {
            try env.write { txn in try pages.apply(changes.sorted { $0.key.lexicographicallyPrecedes($1.key) }, prefix: prefix, in: txn) }
        }

        /// Every LMDB pair of the database, in order.
        func pairs() throws -> [[UInt8]: [UInt8]] {
            try env.read { txn in
                let cursor = try pages.database.cursor(in: txn)
                var result: [[UInt8]: [UInt8]] = [:]
                var entry = try cursor.firstBytes()
                while let e = entry {
                    result[Array(e.key)] = Array(e.value)
                    entry = try cursor.nextBytes()
                }
                return result
            }
        }

        /// The map under `prefix`, walked.
        func walked(_ prefix: [UInt8]) throws -> [([UInt8], [UInt8])] {
            try env.read { txn in
                let walk = try pages.walker(prefix: prefix, in: txn)
                var result: [([UInt8], [UInt8])] = []
                var more = try walk.first()
                while more {
                    result.append((walk.key, Array(walk.value)))
                    more = try walk.next()
                }
                return result
            }
        }

        func value(_ key: [UInt8], _ prefix: [UInt8]) throws -> [UInt8]? {
            try env.read { txn in try pages.withValue(forKey: key, prefix: prefix, in: txn) { Array($0) } }
        }
    }

    /// Keys like the keyword index's identities (`item 0x00 i<user>-<n>-<m>`),
    /// sharing long prefixes, with some raw bytes (0x00, 0xFF) among them.
    static func key(_ rng: inout Seeded) -> [UInt8] {
        switch rng.next() % 4 {
        case 0: return Array("item".utf8) + [0] + Array("i\(rng.next() % 5)-\(rng.next() % 2_000)-\(rng.next() % 3)".utf8)
        case 1: return Array("activity".utf8) + [0] + Array("order-\(rng.next() % 500)".utf8)
        case 2: return (0..<Int(1 + rng.next() % 6)).map { _ in [0x00, 0x01, 0x7F, 0x80, 0xFF][Int(rng.next() % 5)] }
        default: return Array("item".utf8) + [0] + Array(repeating: UInt8(ascii: "x"), count: Int(rng.next() % 300))
        }
    }

    /// Checks that what `f` holds under each prefix is exactly `model`'s,
    /// and that its pages are those of the same set written in one batch.
    static func check(_ f: Fixture, _ model: [[UInt8]: [[UInt8]: [UInt8]]]) throws {
        let fresh = try Fixture()
        for (prefix, map) in model {
            let sorted = map.sorted { $0.key.lexicographicallyPrecedes($1.key) }
            let walked = try f.walked(prefix)
            #expect(walked.map(\.0) == sorted.map(\.key))
            #expect(walked.map(\.1) == sorted.map(\.value))
            for (k, v) in sorted.prefix(200) {
                #expect(try f.value(k, prefix) == v)
                // Keys next to it, present or not: a prefix of it, it extended, its last byte changed.
                for near in [Array(k.dropLast()), k + [0], k + [0xFF], k.isEmpty ? [] : k.dropLast() + [k.last! &+ 1]] {
                    #expect(try f.value(near, prefix) == map[near], "lookup of \(near)")
                }
            }
            try fresh.apply(sorted.map { ($0.key, $0.value) }, prefix: prefix)
        }
        #expect(try f.pairs() == fresh.pairs(), "pages depend on how the writes were grouped")
    }

    @Test("random writes in random transactions: every key reads back, and the pages equal one batch's of the same set")
    func randomWritesMatchTheModel() throws {
        var rng = Seeded(state: 28)
        let f = try Fixture()
        let prefixes: [[UInt8]] = [[0, 0, 0, 1], [0, 0, 0, 2], [0, 0, 1, 0]]
        var model: [[UInt8]: [[UInt8]: [UInt8]]] = [:]
        for round in 0..<40 {
            let prefix = prefixes[Int(rng.next() % 3)]
            var changes: [[UInt8]: [UInt8]?] = [:]
            let existing = Array(model[prefix, default: [:]].keys)
            for _ in 0..<Int(1 + rng.next() % (round < 10 ? 400 : 60)) {
                if !existing.isEmpty && rng.next() % 3 == 0 {
                    changes[existing[Int(rng.next() % UInt64(existing.count))]] = .some(nil)   // removal
                } else if rng.next() % 5 == 0 {
                    changes[Self.key(&rng)] = .some(nil)                                             // removal of a key that may be absent
                } else {
                    changes[Self.key(&rng)] = .some((0..<Int(rng.next() % 4)).map { _ in UInt8(truncatingIfNeeded: rng.next()) })
                }
            }
            try f.apply(changes.map { ($0.key, $0.value) }, prefix: prefix)
            for (k, v) in changes { model[prefix, default: [:]][k] = v }
            if round % 8 == 7 { try Self.check(f, model) }
        }
        try Self.check(f, model)
        #expect(model.values.map(\.count).reduce(0, +) > 500)
    }

    @Test("pages start at the smallest key and at boundary keys, and split before passing the byte limit")
    func boundaries() throws {
        var rng = Seeded(state: 7)
        let f = try Fixture()
        let prefix: [UInt8] = [0, 0, 0, 9]
        var keys = Set<[UInt8]>()
        while keys.count < 5_000 { keys.insert(Array("item".utf8) + [0] + Array("i1-\(rng.next() % 1_000_000)-\(rng.next() % 4)".utf8)) }
        // In three transactions, to be sure a page holds keys from several.
        let all = keys.sorted { $0.lexicographicallyPrecedes($1) }
        for part in 0..<3 {
            try f.apply(all.enumerated().filter { $0.offset % 3 == part }.map { ($0.element, [UInt8(part)]) }, prefix: prefix)
        }
        let pages = try f.pairs().sorted { $0.key.lexicographicallyPrecedes($1.key) }
        let starts = Set(pages.map { Array($0.key.dropFirst(4)) })
        #expect(starts.contains(all[0]))
        var hashStarts = 0
        for (n, k) in all.enumerated() where n > 0 {
            if SortedPages.isBoundary(k) {
                #expect(starts.contains(k), "a boundary key inside a page")
                hashStarts += 1
            }
        }
        // About one key in 64 is a boundary; each page fits its limit.
        #expect(hashStarts > 5_000 / 64 / 2 && hashStarts < 5_000 / 64 * 2)
        #expect(pages.allSatisfy { $0.key.count - 4 + $0.value.count <= SortedPages.pageByteLimit })
        // Front coding: these keys (16 bytes, the first 8 shared by all) and their value byte take about 9 bytes.
        let stored = pages.map { $0.key.count + $0.value.count }.reduce(0, +)
        #expect(stored < all.map(\.count).reduce(0, +) * 2 / 3, "\(stored) bytes for \(all.count) keys")
    }

    @Test("keys made to dodge the boundary hash still make pages within the byte limit")
    func hostileKeys() throws {
        let f = try Fixture()
        let prefix: [UInt8] = [0, 0, 0, 3]
        var keys: [[UInt8]] = []
        var n = 0
        while keys.count < 3_000 {
            let k = Array("item".utf8) + [0] + Array("\(String(repeating: "z", count: 150))\(n)".utf8)
            if !SortedPages.isBoundary(k) { keys.append(k) }
            n += 1
        }
        try f.apply(keys.sorted { $0.lexicographicallyPrecedes($1) }.map { ($0, [1, 2, 3]) }, prefix: prefix)
        let pages = try f.pairs()
        #expect(pages.count > 10)
        #expect(pages.allSatisfy { $0.key.count - 4 + $0.value.count <= SortedPages.pageByteLimit })
        // Removing and inserting in the middle of the one long run re-pages it as a batch would.
        var model = Dictionary(uniqueKeysWithValues: keys.map { ($0, [UInt8]([1, 2, 3])) })
        let middle = keys.sorted { $0.lexicographicallyPrecedes($1) }[1_500]
        try f.apply([(middle, nil)], prefix: prefix)
        model[middle] = nil
        try Self.check(f, [prefix: model])
    }

    @Test("a seek lands on the first key at or after its target, across pages and prefixes")
    func prefixSeek() throws {
        var rng = Seeded(state: 99)
        let f = try Fixture()
        let a: [UInt8] = [0, 0, 0, 1], b: [UInt8] = [0, 0, 0, 2]
        var keys = Set<[UInt8]>()
        while keys.count < 2_000 { keys.insert(Array("item".utf8) + [0] + Array("order-\(rng.next() % 100_000)".utf8)) }
        let sorted = keys.sorted { $0.lexicographicallyPrecedes($1) }
        try f.apply(sorted.map { ($0, [7]) }, prefix: a)
        try f.apply([(Array("item".utf8) + [0] + Array("aaa".utf8), [1]), (Array("zzz".utf8), [2])], prefix: b)
        try f.env.read { txn in
            let walk = try f.pages.walker(prefix: a, in: txn)
            for target in ["order-5", "order-99999", "order-", "order-0", "a", "order-50000x"] {
                let t = Array("item".utf8) + [0] + Array(target.utf8)
                let expected = sorted.first { !$0.lexicographicallyPrecedes(t) }
                let found = try walk.seek(atOrAfter: t)
                #expect(found == (expected != nil))
                if found { #expect(walk.key == expected) }
            }
            // Before every key of the space: its first; after every key: nothing (never the next space's).
            #expect(try walk.seek(atOrAfter: []) && walk.key == sorted[0])
            #expect(try !walk.seek(atOrAfter: Array("zzz".utf8)))
            // Every key under "order-1", by a seek and a walk: exactly the model's.
            var under: [[UInt8]] = []
            let p = Array("item".utf8) + [0] + Array("order-1".utf8)
            var more = try walk.seek(atOrAfter: p)
            while more && walk.key.starts(with: p) {
                under.append(walk.key)
                more = try walk.next()
            }
            #expect(under == sorted.filter { $0.starts(with: p) })
            #expect(try f.pages.withValue(forKey: Array("zzz".utf8), prefix: a, in: txn) { _ in true } == nil)
            #expect(try f.pages.withValue(forKey: Array("zzz".utf8), prefix: b, in: txn) { Array($0) } == [2])
        }
        // An empty map: nothing to seek, nothing to find.
        let (walked, found) = try f.env.read { txn in
            (try f.pages.walker(prefix: [0, 0, 0, 5], in: txn).first(),
             try f.pages.withValue(forKey: sorted[0], prefix: [0, 0, 0, 5], in: txn) { _ in true })
        }
        #expect(!walked && found == nil)
    }

    @Test("removing every key leaves no page; removing a run's first key joins it to the run before")
    func removals() throws {
        var rng = Seeded(state: 3)
        let f = try Fixture()
        let prefix: [UInt8] = [0, 0, 0, 1]
        var keys = Set<[UInt8]>()
        while keys.count < 1_000 { keys.insert(Array("k-\(rng.next() % 1_000_000)".utf8)) }
        let sorted = keys.sorted { $0.lexicographicallyPrecedes($1) }
        try f.apply(sorted.map { ($0, [1]) }, prefix: prefix)
        // Every boundary key goes, one transaction each.
        var model = Dictionary(uniqueKeysWithValues: sorted.map { ($0, [UInt8]([1])) })
        for k in sorted.dropFirst() where SortedPages.isBoundary(k) {
            try f.apply([(k, nil)], prefix: prefix)
            model[k] = nil
        }
        try Self.check(f, [prefix: model])
        try f.apply(model.keys.map { ($0, nil) }, prefix: prefix)
        #expect(try f.pairs().isEmpty)
    }

    @Test("a damaged page is an error naming the database and the page, never a crash")
    func damagedPage() throws {
        let f = try Fixture(name: "search.ids")
        let prefix: [UInt8] = [0, 0, 0, 1]
        let keys = (0..<200).map { Array("order-\($0)".utf8) }.sorted { $0.lexicographicallyPrecedes($1) }
        try f.apply(keys.map { ($0, [5]) }, prefix: prefix)
        let first = try #require(try f.pairs().keys.min { $0.lexicographicallyPrecedes($1) })
        let good = try #require(try f.pairs()[first])
        // Cut short, a key sharing more than the previous has, keys out of order, a value past the end, a varint that never ends.
        let damaged: [[UInt8]] = [
            Array(good.prefix(good.count - 1)),
            [1, 5, 40, 1, 0x41, 1, 5],
            [1, 5, 0, 1, 0x30, 1, 5],
            [1, 5, 2, 1, 0x7A, 9, 5],
            [0x80, 0x80, 0x80, 0x80, 0x80, 0x80],
        ]
        for bytes in damaged {
            try f.env.write { txn in try f.pages.database.put(bytes, forKey: first, in: txn) }
            #expect {
                try f.env.read { txn in
                    let walk = try f.pages.walker(prefix: prefix, in: txn)
                    var more = try walk.first()
                    while more { more = try walk.next() }
                }
            } throws: { error in
                guard let error = error as? SortedPagesError else { return false }
                return error.database == "search.ids" && error.pageKey == first && "\(error)".contains("damaged page in database search.ids")
            }
            // A write over it refuses too, and writes nothing.
            let before = try f.pairs()
            #expect(throws: SortedPagesError.self) { try f.apply([(keys[0], nil)], prefix: prefix) }
            #expect(try f.pairs() == before)
        }
    }

    @Test("changes out of order, twice the same key, or too long a key are refused and write nothing")
    func refusals() throws {
        let f = try Fixture()
        let prefix: [UInt8] = [0, 0, 0, 1]
        try f.apply([(Array("a".utf8), [1])], prefix: prefix)
        let before = try f.pairs()
        #expect(throws: SortedPagesError.self) {
            try f.env.write { txn in try f.pages.apply([(Array("b".utf8), [1]), (Array("a".utf8), [2])], prefix: prefix, in: txn) }
        }
        #expect(throws: SortedPagesError.self) {
            try f.env.write { txn in try f.pages.apply([(Array("b".utf8), [1]), (Array("b".utf8), nil)], prefix: prefix, in: txn) }
        }
        #expect(throws: SortedPagesError.self) {
            try f.env.write { txn in try f.pages.apply([(Array(repeating: 1, count: 508), [1])], prefix: prefix, in: txn) }
        }
        #expect(try f.pairs() == before)
    }
}
