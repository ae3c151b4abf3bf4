import EventLog
import Foundation
import LMDB
import Testing
import TextIndex
@testable import ActivityDomain

/// SPEC §9's isolation rule as a property: for every user U, every read of U
/// in a store that saw many users' operations equals the same read in a
/// store that saw only U's operations (and the store-wide ones), scores
/// included. Log positions are the one thing that differs (the log is
/// shared), so the reads are compared without them, as the CLI prints them.
@Suite("User spaces: the isolation rule")
struct UserSpaceIsolationTests {
    /// Canonically equal names that differ in bytes are two names (SPEC
    /// §2): josé as NFC and NFD, and OHM SIGN and GREEK CAPITAL OMEGA, for
    /// users, devices, saved keys and item identifiers.
    static let users = ["", "alice", "bob", "carol", "jos\u{e9}", "jose\u{301}"]
    static let activityIDs = ["a1", "a2", "a3"]
    static let devices = ["phone", "tablet", "laptop", "\u{2126}", "\u{3a9}"]
    static let keys = ["order-1", "order-2", "k\u{e9}", "ke\u{301}"]
    static let itemIDs = ["i1", "i2", "i3", "i4", "caf\u{e9}", "cafe\u{301}"]
    static let domains = ["orders", "orders.2026", "menu"]
    static let words = ["coffee", "latte", "tea", "matcha", "oat", "churros", "抹茶", "café"]

    /// Random operations of every user, reusing the same ids, devices,
    /// keys, domains, index names and words, with batches, deletes,
    /// delete-alls and store-wide purges; each with a fixed time.
    static func operations(seed: UInt64, count: Int) -> [ActivityCommand.Timed] {
        var rng = SeededGenerator(seed: seed)
        var ops: [ActivityCommand.Timed] = []
        func words(_ n: Int) -> [String] { (0..<n).map { _ in Self.words.randomElement(using: &rng)! } }
        func item() -> SearchableItem {
            var item = SearchableItem(uniqueIdentifier: itemIDs.randomElement(using: &rng)!,
                                      domainIdentifier: Bool.random(using: &rng) ? domains.randomElement(using: &rng)! : nil)
            item.attributeSet.title = words(Int.random(in: 1...3, using: &rng)).joined(separator: " ")
            if Bool.random(using: &rng) { item.attributeSet.keywords = words(2) }
            if Int.random(in: 0..<4, using: &rng) == 0 { item.attributeSet.contentDescription = words(6).joined(separator: " ") }
            if Int.random(in: 0..<5, using: &rng) == 0 { item.isUpdate = true }
            if Int.random(in: 0..<4, using: &rng) == 0 { item.expirationDate = t0.addingTimeInterval(Double(Int.random(in: 1...400, using: &rng))) }
            return item
        }
        for i in 0..<count {
            let user = users.randomElement(using: &rng)!
            let time = at(Double(i))
            func add(_ command: ActivityCommand) { ops.append(ActivityCommand.Timed(command, user: user, at: time)) }
            switch Int.random(in: 0..<100, using: &rng) {
            case 0..<14:
                var activity = makeActivity(activityIDs.randomElement(using: &rng)!, device: devices.randomElement(using: &rng)!)
                activity.title = words(2).joined(separator: " ")
                activity.keywords = Set(words(2))
                activity.eligibleForSearch = Bool.random(using: &rng)
                activity.eligibleForPrediction = Bool.random(using: &rng)
                if Bool.random(using: &rng) { activity.persistentIdentifier = keys.randomElement(using: &rng)! }
                add(.createActivity(activity))
            case 14..<34: add(.becomeCurrent(activityIDs.randomElement(using: &rng)!))
            case 34..<40: add(.resignCurrent(activityIDs.randomElement(using: &rng)!))
            case 40..<43: add(.invalidate(activityIDs.randomElement(using: &rng)!))
            case 43..<50:
                var update = ActivityUpdate()
                update.title = .some(words(2).joined(separator: " "))
                update.keywords = Set(words(1))
                add(.updateActivity(activityIDs.randomElement(using: &rng)!, update))
            case 50..<53: add(.deleteSavedUserActivities(persistentIdentifiers: [keys.randomElement(using: &rng)!]))
            case 53..<55: add(.deleteAllSavedUserActivities)
            case 55..<72: add(.indexSearchableItems((0..<Int.random(in: 1...3, using: &rng)).map { _ in item() }))
            case 72..<77: add(.deleteSearchableItems(identifiers: [itemIDs.randomElement(using: &rng)!]))
            case 77..<80: add(.deleteSearchableItemsInDomains([domains.randomElement(using: &rng)!]))
            case 80..<82: add(.deleteAllSearchableItems)
            case 82..<92:
                add(.beginIndexBatch(index: "indexer"))
                add(.indexSearchableItems([item(), item()]))
                let state = Data("s\(i)".utf8)
                add(.endIndexBatch(index: "indexer", clientState: state, expectedClientState: nil))
            default:
                // Store-wide: every space's expired items, each space's removals its own event.
                ops.append(ActivityCommand.Timed(.purgeExpired(now: time), user: nil, at: time))
            }
        }
        return ops
    }

    /// Applies `ops` in transactions of `transactionSize` operations; a
    /// transaction with a rejected command is applied again one index batch
    /// or command at a time, so that exactly the valid ones land (their
    /// validity depends on their own space only).
    @discardableResult
    static func apply(_ ops: [ActivityCommand.Timed], to store: ActivityStore, transactionSize: Int) throws -> Outcomes {
        // Units: a command, or a whole index batch.
        var units: [[ActivityCommand.Timed]] = []
        var open: [ActivityCommand.Timed]?
        for op in ops {
            if case .beginIndexBatch = op.command { open = [op]; continue }
            if open != nil {
                open!.append(op)
                if case .endIndexBatch = op.command { units.append(open!); open = nil }
                continue
            }
            units.append([op])
        }
        var start = 0
        var outcomes = Outcomes()
        while start < units.count {
            let chunk = Array(units[start..<min(units.count, start + transactionSize)])
            do {
                try store.write(chunk.flatMap { $0 })
                for _ in chunk { try outcomes.run {} }
            } catch is ActivityError {
                for unit in chunk { try outcomes.run { _ = try store.write(unit) } }
            }
            start += transactionSize
        }
        return outcomes
    }

    /// Everything a read of `user` shows, positions left out.
    static func reads(of space: any UserScoped) throws -> [String] {
        let now = at(500)
        // The activity's canonical bytes (sets sorted), so that equal activities print alike.
        func describe(_ a: UserActivity) -> String { (try? a.proto.serializedBytes() as [UInt8]).map { Data($0).base64EncodedString() } ?? "?" }
        var out: [String] = []
        out.append("activities " + (try space.activities().map { "\($0.activity.activity) \($0.state) \(describe($0.activity))" }.joined(separator: "|")))
        out.append("current " + (try space.currentActivities().map { "\($0.device) \($0.activity.activity) \($0.becameCurrentAt)" }.joined(separator: "|")))
        out.append("saved " + (try space.savedActivities().map { "\($0.key) \($0.savedAt) \(describe($0.activity))" }.joined(separator: "|")))
        out.append("items " + (try space.items().map { "\((try? $0.item.proto.serializedBytes() as [UInt8]).map { Data($0).base64EncodedString() } ?? "?") \($0.hasDefaultExpiration) \($0.indexedAt)" }.joined(separator: "|")))
        out.append("clientStates " + (try space.clientStates().map { "\($0.index)=\($0.clientState.base64EncodedString())" }.joined(separator: "|")))
        for device in devices + ["watch"] {
            out.append("handoff \(device) " + (try space.handoffCandidates(device: device, now: now).map { "\($0.device) \($0.activity.activity)" }.joined(separator: "|")))
        }
        out.append("suggestions " + (try space.suggestions(now: now).map { "\($0.key) \($0.score)" }.joined(separator: "|")))
        for text in ["coffee", "lat", "tea matcha", "抹茶", "cafe", "oat c"] {
            out.append("search \(text) " + (try space.search(text, now: now, after: try space.head()).map { "\($0.kind):\($0.identifier):\($0.score)" }.joined(separator: "|")))
        }
        for expression in [#"keywords == "coffee"c"#, #"kind == "activity""#, #"domainIdentifier == "orders*""#, #"title == "*latte*"cd"#] {
            out.append("query \(expression) " + (try space.query(expression, now: now, after: try space.head()).map { "\($0.kind):\($0.identifier)" }.joined(separator: "|")))
        }
        for identifier in keys + activityIDs {
            switch try space.resolve(identifier) {
            case .saved(let saved): out.append("resolve \(identifier) saved \(saved.key)")
            case .removed(let removal): out.append("resolve \(identifier) removed \(removal.key) \(removal.operation) \(removal.removedAt)")
            case .unknown: out.append("resolve \(identifier) unknown")
            }
        }
        return out
    }

    @Test("every user's reads equal a store of that user's operations alone", arguments: [(1, 1), (2, 7), (3, 64), (4, 1000)])
    func isolation(seed: UInt64, transactionSize: Int) throws {
        let ops = Self.operations(seed: seed, count: 400)
        let shared = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: shared) }
        let store = try ActivityStore(path: shared, options: testOptions())
        try store.declareActivityTypes([viewOrder], at: t0)
        let outcomes = try Self.apply(ops, to: store, transactionSize: transactionSize)
        #expect(outcomes.accepted >= 250 && outcomes.rejectedCount >= 1, "\(outcomes)")
        let names = Set(Self.users.map { Name($0) })
        #expect(try store.users().map { Name($0.user) }.allSatisfy(names.contains))
        for user in Self.users {
            let alone = temporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: alone) }
            let single = try ActivityStore(path: alone, options: testOptions())
            try single.declareActivityTypes([viewOrder], at: t0)
            // Purges are store-wide: the single store gets them too.
            try Self.apply(ops.filter { $0.user.map { Name.equal($0, user) } ?? true }, to: single, transactionSize: transactionSize)
            let expected = try Self.reads(of: single.user(user))
            let actual = try Self.reads(of: store.user(user))
            for (e, a) in zip(expected, actual) { #expect(a == e, "user \"\(user)\"") }
            #expect(actual.count == expected.count)
        }
        // The rebuild equals the live views, byte for byte.
        let comparison = try store.eventStore.verifyViews(full: true)
        #expect(comparison.isEqual, "\(String(describing: comparison.difference))")
    }

    @Test("a user's delete-alls leave every other user's data byte for byte as it was")
    func deleteAllTouchesOneSpace() throws {
        try withStore { store in
            try store.declareActivityTypes([viewOrder])
            for user in Self.users {
                let space = store.user(user)
                var activity = makeActivity("a1", device: "phone")
                activity.title = "Latte for \(user)"
                activity.eligibleForSearch = true
                activity.persistentIdentifier = "order-42"
                try space.createActivity(activity, at: at(1))
                try space.becomeCurrent("a1", at: at(2))
                var item = SearchableItem(uniqueIdentifier: "order-1", domainIdentifier: "orders")
                item.attributeSet.title = "coffee order of \(user)"
                try space.indexBatch(index: "idx", clientState: Data(user.utf8), at: at(3)) { $0.indexSearchableItems([item]) }
            }
            // By bytes: josé as NFC and as NFD are two users (a String key would merge them).
            let before = try Dictionary(uniqueKeysWithValues: Self.users.map { (Name($0), try Self.reads(of: store.user($0))) })
            let bytesBefore = try Self.bytes(of: store, except: "alice")
            try store.user("alice").deleteAllSearchableItems(at: at(4))
            try store.user("alice").deleteAllSavedUserActivities(at: at(5))
            #expect(try store.user("alice").items().isEmpty)
            #expect(try store.user("alice").savedActivities().isEmpty)
            #expect(try store.user("alice").search("coffee", now: at(6), after: try store.head()).isEmpty)
            #expect(try store.user("alice").fetchLastClientState(index: "idx") == nil)
            for user in Self.users where user != "alice" {
                #expect(try Self.reads(of: store.user(user)) == before[Name(user)]!, "user \"\(user)\"")
            }
            #expect(try Self.bytes(of: store, except: "alice") == bytesBefore)
        }
    }

    /// `user`'s 1,000 items, in 10 batches, each batch of `others` users'
    /// items around it.
    static func fill(_ store: ActivityStore, user: String, others: Int) throws {
        // One generator for the user, one for the others: the user's items are the same in every store.
        var mine = SeededGenerator(seed: 7), theirs = SeededGenerator(seed: 8)
        func items(_ prefix: String, _ rng: inout SeededGenerator) -> [SearchableItem] {
            (0..<100).map { i in
                var item = SearchableItem(uniqueIdentifier: "\(prefix)-\(i)")
                item.attributeSet.title = (0..<4).map { _ in words.randomElement(using: &rng)! }.joined(separator: " ")
                item.attributeSet.keywords = [words.randomElement(using: &rng)!]
                return item
            }
        }
        for batch in 0..<10 {
            for other in 0..<others { try store.user("other\(other)").indexSearchableItems(items("b\(batch)", &theirs), at: at(Double(batch))) }
            try store.user(user).indexSearchableItems(items("b\(batch)", &mine), at: at(Double(batch)))
        }
    }

    @Test("cost follows the user: a search reads the same keys however many other users the store holds")
    func costFollowsTheUser() throws {
        var costs: [[Int]] = []
        var hits: [[SearchHit]] = []
        for others in [0, 20] {
            let path = temporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: path) }
            let store = try ActivityStore(path: path, options: testOptions())
            try Self.fill(store, user: "u", others: others)
            #expect(try store.users().count == others + 1)
            var perQuery: [Int] = []
            var found: [SearchHit] = []
            try store.readIndex { index, txn, log in
                let index = index.space(try #require(try store.views.spaces.id(of: "u", in: log)))
                for text in ["coffee", "lat", "tea matcha", "oat c"] {
                    var cost = ReadCost()
                    found += try index.search(text, now: at(100), cost: &cost, in: txn)
                    perQuery.append(cost.keys)
                }
                var cost = ReadCost()
                found += try index.query(#"title == "*latte*"c && keywords == "oat""#, now: at(100), cost: &cost, in: txn, contentIn: log)
                perQuery.append(cost.keys)
            }
            costs.append(perQuery)
            hits.append(found)
        }
        #expect(costs[0] == costs[1], "keys read alone vs beside 20,000 other documents")
        #expect(costs[0].allSatisfy { $0 > 0 })
        #expect(hits[0] == hits[1])
        #expect(!hits[0].isEmpty)
    }

    /// Every key and value of every view database that does not belong to
    /// `user`'s space (keys starting with another space id; the directory
    /// and the store-wide types whole).
    static func bytes(of store: ActivityStore, except user: String) throws -> [String: [[UInt8]]] {
        try store.eventStore.read { txn in
            guard let excluded = try store.views.spaces.id(of: user, in: txn) else { return [:] }
            let prefix = SpaceKey.prefix(of: excluded)
            var result: [String: [[UInt8]]] = [:]
            let events: Database<[UInt8], [UInt8]> = try txn.openDatabase("spaces.events")
            for projection in store.views.all {
                for name in projection.databaseNames {
                    let db: Database<[UInt8], [UInt8]> = try txn.openDatabase(name)
                    let cursor = try db.cursor(in: txn)
                    var entry = try cursor.firstBytes()
                    var rows: [[UInt8]] = []
                    while let e = entry {
                        let key = [UInt8](e.key)
                        // The expiration index keys start with a time, then the position of the
                        // event that wrote the item: the user's when spaces.events lists it.
                        let owned = name == "spotlight.itemsByExpiration" ? try events.get(prefix + key.dropFirst(8).prefix(8), in: txn) != nil
                            : name == "spaces.byName" || name == "activity.registry.types" ? false
                            : key.starts(with: prefix)
                        if !owned { rows.append(key + [0xFF] + [UInt8](e.value)) }
                        entry = try cursor.nextBytes()
                    }
                    result[name] = rows
                }
            }
            return result
        }
    }
}
