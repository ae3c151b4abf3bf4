import EventLog
import Foundation
import LMDB
import Testing
import TextIndex
@testable import ActivityDomain

/// SPEC §2, "Names compare by bytes": Swift's `String ==` is canonical
/// equivalence (`"jos\u{e9}" == "jose\u{301}"`), the store's names are bytes.
@Suite("Names compare by bytes")
struct NamesAsBytesTests {
    /// Pairs that `String ==` calls equal and whose bytes differ.
    static let pairs: [(String, String)] = [("jos\u{e9}", "jose\u{301}"), ("\u{2126}", "\u{3a9}"), ("caf\u{e9}", "cafe\u{301}")]

    @Test("the pairs are canonically equal, so a String-keyed set would merge them")
    func pairsAreEquivalent() {
        for (a, b) in Self.pairs {
            #expect(a == b && Array(a.utf8) != Array(b.utf8))
            #expect(Set([Name(a), Name(b)]).count == 2 && Name(a) != Name(b))
        }
    }

    /// Every read a user has, as text (positions left out).
    static func reads(of space: UserSpace, now: Date) throws -> [String] {
        [
            "activities " + (try space.activities().map { "\($0.activity.activity) \($0.activity.title ?? "")" }.joined(separator: "|")),
            "current " + (try space.currentActivities().map { "\($0.device) \($0.activity.activity)" }.joined(separator: "|")),
            "onDevice " + (try space.currentActivity(onDevice: "phone").map { $0.activity.activity } ?? "-"),
            "saved " + (try space.savedActivities().map { "\($0.key) \($0.activity.title ?? "")" }.joined(separator: "|")),
            "items " + (try space.items().map { "\($0.item.uniqueIdentifier) \($0.item.attributeSet.title ?? "")" }.joined(separator: "|")),
            "item " + (try space.item("shared").map { $0.item.attributeSet.title ?? "" } ?? "-"),
            "states " + (try space.clientStates().map { "\($0.index)=\($0.clientState.base64EncodedString())" }.joined(separator: "|")),
            "state " + (try space.fetchLastClientState(index: "indexer").map { $0.base64EncodedString() } ?? "-"),
            "handoff " + (try space.handoffCandidates(device: "laptop", now: now).map(\.activity.activity).joined(separator: "|")),
            "suggestions " + (try space.suggestions(now: now).map(\.key).joined(separator: "|")),
            "search " + (try space.search("secret", now: now, after: try space.head()).map(\.identifier).joined(separator: "|")),
            "query " + (try space.query(#"title == "secret*""#, now: now, after: try space.head()).map(\.identifier).joined(separator: "|")),
            "resolve " + "\(try space.resolve("key"))",
            // One read of the log and the index (SpaceReader): documents with each hit, items fetched by identifier.
            "documents " + (try space.read(after: try space.head()) { reader in
                try reader.searchDocuments("secret", now: now).map { "\($0.hit.identifier)" }
            }.joined(separator: "|")),
            "fetched " + (try space.read { try $0.items(withIdentifiers: ["shared", "batched"]).map(\.item.uniqueIdentifier) }.joined(separator: "|")),
        ]
    }

    @Test("two handles whose names are canonically equal never see each other's data, through any read", arguments: pairs)
    func handlesStayApart(first: String, second: String) throws {
        try withStore { store in
            try store.declareActivityTypes([viewOrder])
            let now = at(100)
            // Only the first user writes.
            let writer = store.user(first)
            try writer.createActivity(makeActivity("a1", device: "phone") {
                $0.title = "secret title"; $0.eligibleForSearch = true; $0.eligibleForPrediction = true; $0.persistentIdentifier = "key"
            }, at: at(1))
            try writer.becomeCurrent("a1", at: at(2))
            try writer.indexSearchableItems([makeItem("shared", title: "secret item")], at: at(3))
            try writer.indexBatch(index: "indexer", clientState: Data("s1".utf8), at: at(4)) { batch in
                batch.indexSearchableItems([makeItem("batched", title: "secret batched")])
            }
            let written = try Self.reads(of: writer, now: now)
            #expect(written.contains { $0.hasPrefix("items ") && $0.contains("shared") })
            // The other user: empty, every read; and the same as a user never seen.
            let other = try Self.reads(of: store.user(second), now: now)
            let nobody = try Self.reads(of: store.user("never-seen"), now: now)
            #expect(other == nobody, "\(other)")
            #expect(!other.joined().contains("secret"))
            // Both are listed, as two users.
            #expect(try store.users().filter { Name.equal($0.user, first) || Name.equal($0.user, second) }.count == 1)
            // The log filter by user (what `eventlog log --user` applies) keeps them apart too.
            let events = try store.eventStore.events()
            let firsts = try events.filter { try ActivityEventCatalog.user(of: $0).map { Name.equal($0, first) } ?? false }
            let seconds = try events.filter { try ActivityEventCatalog.user(of: $0).map { Name.equal($0, second) } ?? false }
            #expect(!firsts.isEmpty && seconds.isEmpty)
            // Forgetting the second forgets nothing of the first.
            let forgot = try store.forgetUser(second, at: at(5))
            #expect(forgot.positions == nil)
            #expect(try Self.reads(of: writer, now: now) == written)
        }
    }

    @Test("one operation naming both forms of an identifier keeps both: items, deletions, saved keys, index batches, userInfo keys")
    func oneOperationKeepsBoth() throws {
        let (nfc, nfd) = ("caf\u{e9}", "cafe\u{301}")
        try withStore { store in
            // indexSearchableItems with both: two items.
            try store.indexSearchableItems([makeItem(nfc, title: "one"), makeItem(nfd, title: "two")], at: at(1))
            #expect(try store.items().map { Array($0.item.uniqueIdentifier.utf8) }.sorted { $0.lexicographicallyPrecedes($1) }
                == [Array(nfc.utf8), Array(nfd.utf8)].sorted { $0.lexicographicallyPrecedes($1) })
            #expect(try store.item(nfc)?.item.attributeSet.title == "one")
            #expect(try store.item(nfd)?.item.attributeSet.title == "two")
            // deleteSearchableItems with both: both go.
            let deleted = try store.deleteSearchableItems(withIdentifiers: [nfc, nfd], at: at(2))
            #expect(deleted.removedItems.count == 2)
            #expect(try store.items().isEmpty)
            // Saved copies under both keys; deleteSavedUserActivities with both removes both.
            try store.declareActivityTypes([viewOrder])
            for (index, key) in [nfc, nfd].enumerated() {
                try store.createActivity(makeActivity("a\(index)", device: "d\(index)") {
                    $0.eligibleForSearch = true; $0.persistentIdentifier = key
                }, at: at(3))
                try store.becomeCurrent("a\(index)", at: at(4))
            }
            #expect(try store.savedActivities().count == 2)
            let removed = try store.deleteSavedUserActivities(withPersistentIdentifiers: [nfc, nfd], at: at(5))
            #expect(removed.removedKeys.count == 2)
            #expect(try store.savedActivities().isEmpty)
            // Two index batches of the two index names, open at once in one transaction.
            try store.write([.beginIndexBatch(index: nfc), .beginIndexBatch(index: nfd),
                               .endIndexBatch(index: nfc, clientState: Data("1".utf8), expectedClientState: nil),
                               .endIndexBatch(index: nfd, clientState: Data("2".utf8), expectedClientState: nil)], at: at(6))
            #expect(try store.fetchLastClientState(index: nfc) == Data("1".utf8))
            #expect(try store.fetchLastClientState(index: nfd) == Data("2".utf8))
            // userInfo with both keys keeps both, and requires both.
            try store.createActivity(makeActivity("u", device: "d9") {
                $0.userInfo = [Name(nfc): 1, Name(nfd): 2]
                $0.requiredUserInfoKeys = [Name(nfc), Name(nfd)]
                $0.eligibleForSearch = true
            }, at: at(7))
            try store.becomeCurrent("u", at: at(8))
            #expect(try store.activity("u")?.activity.userInfo.count == 2)
            #expect(try store.savedActivity(forKey: "u")?.activity.userInfo == [Name(nfc): 1, Name(nfd): 2])
            // An update that rewrites the title in the other form is a change, and is recorded.
            var update = ActivityUpdate()
            update.title = .some(nfc)
            try store.updateActivity("u", update, at: at(9))
            update.title = .some(nfd)
            let changed = try store.updateActivity("u", update, at: at(10))
            #expect(changed.positions != nil)
            #expect(try store.activity("u")?.activity.title.map { Array($0.utf8) } == Array(nfd.utf8))
        }
    }

    @Test("a read checks names as a write does: a 257-byte user, an over-long identifier, are errors, not empty answers")
    func readsCheckNames() throws {
        try withStore { store in
            let long = String(repeating: "u", count: 257)
            #expect { try store.user(long).items() } throws: { ($0 as? ActivityError)?.code == .invalidUser }
            #expect { try store.user(long).indexSearchableItems([makeItem("x")]) } throws: { ($0 as? ActivityError)?.code == .invalidUser }
            #expect { try store.user("nul\u{0}").search("x", now: t0) } throws: { ($0 as? ActivityError)?.code == .invalidUser }
            #expect { try store.currentActivity(onDevice: String(repeating: "d", count: 257)) } throws: {
                ($0 as? ActivityError)?.code == .identifierTooLong
            }
            #expect { try store.item(String(repeating: "i", count: 300)) } throws: { ($0 as? ActivityError)?.code == .identifierTooLong }
        }
    }
}

/// SPEC §2, "Input is bounded", for operations: duplicate members, bytes
/// that are not UTF-8, nesting, and the size of one value.
@Suite("Operations are bounded and unambiguous")
struct BoundedOperationTests {
    static func rejection(_ line: [UInt8]) -> String? {
        do {
            _ = try OperationDecoder().decode(line)
            return nil
        } catch {
            return "\(error)"
        }
    }

    static func rejection(_ line: String) -> String? { rejection(Array(line.utf8)) }

    @Test("a member given twice is refused in every object, naming it: top level, an item, attributeSet, contentAttributeSet, userInfo",
          arguments: [
              (#"{"op":"deleteAllSearchableItems","op":"deleteAllSearchableItems"}"#, "op", "the top level"),
              (#"{"op":"indexSearchableItems","user":"a","items":[{"uniqueIdentifier":"i1","uniqueIdentifier":"i2"}]}"#,
               "uniqueIdentifier", "items[0]"),
              (#"{"op":"indexSearchableItems","items":[{"uniqueIdentifier":"i1","attributeSet":{"title":"a","title":"b"}}]}"#,
               "title", "items[0].attributeSet"),
              (#"{"op":"createActivity","activity":"a","activityType":"com.x.y","device":"d","contentAttributeSet":{"title":"a","title":"b"}}"#,
               "title", "contentAttributeSet"),
              (#"{"op":"createActivity","activity":"a","activityType":"com.x.y","device":"d","userInfo":{"k":1,"k":2}}"#, "k", "userInfo"),
          ])
    func duplicateMembers(line: String, member: String, place: String) throws {
        let message = try #require(Self.rejection(line))
        #expect(message.contains("\"\(member)\" appears twice") && message.contains(place), "\(message)")
    }

    @Test("member names are compared by bytes: two canonically equal names are two members")
    func memberNamesByBytes() throws {
        let line = #"{"op":"createActivity","activity":"a","activityType":"com.x.y","device":"d","userInfo":{"caf\u00e9":1,"cafe\u0301":2}}"#
        let timed = try OperationDecoder().decode(line)
        guard case .createActivity(let activity) = timed.command else { Issue.record("not a createActivity"); return }
        #expect(activity.userInfo.count == 2)
    }

    @Test("a string that is not UTF-8 is an error naming where it is, never U+FFFD")
    func invalidUTF8() throws {
        var line = Array(#"{"op":"indexSearchableItems","user":"x","items":[{"uniqueIdentifier":"ab"}]}"#.utf8)
        let at = line.lastIndex(of: UInt8(ascii: "b"))!   // the b of "ab"
        line[at] = 0xFF
        let message = try #require(Self.rejection(line))
        #expect(message.contains("not valid UTF-8") && message.contains("items[0].uniqueIdentifier"), "\(message)")
        var user = Array(#"{"op":"forgetUser","user":"a"}"#.utf8)
        user[user.count - 3] = 0xC3
        #expect(Self.rejection(user)?.contains("user") == true)
    }

    @Test("arrays and objects nest at most 64 deep; deeper is refused before the parser recurses")
    func nesting() throws {
        func nested(_ depth: Int) -> String {
            #"{"op":"createActivity","activity":"a","activityType":"com.x.y","device":"d","userInfo":{"k":"#
                + String(repeating: "[", count: depth) + String(repeating: "]", count: depth) + "}}"
        }
        #expect(Self.rejection(nested(61)) == nil)
        #expect(Self.rejection(nested(100_000))?.contains("nest deeper than 64") == true)
    }

    @Test("one value is at most 1 MiB: a longer title, keyword, userInfo string or thumbnail is refused, naming the field")
    func valueSize() throws {
        let big = String(repeating: "x", count: ActivityRules.maxFieldBytes + 1)
        try withStore { store in
            #expect { try store.indexSearchableItems([makeItem("i", title: big)]) } throws: {
                ($0 as? ActivityError)?.code == .fieldTooLarge && "\($0)".contains("attributeSet.title")
            }
            #expect { try store.indexSearchableItems([makeItem("i", keywords: ["ok", big])]) } throws: {
                "\($0)".contains("attributeSet.keywords[1]")
            }
            try store.declareActivityTypes([viewOrder])
            #expect { try store.createActivity(makeActivity("a") { $0.userInfo = ["k": .string(big)] }) } throws: {
                ($0 as? ActivityError)?.code == .fieldTooLarge && "\($0)".contains("userInfo.k")
            }
            #expect { try store.createActivity(makeActivity("a") { $0.title = big }) } throws: { "\($0)".contains("title") }
            // At the limit: taken.
            try store.indexSearchableItems([makeItem("i", title: String(repeating: "y", count: ActivityRules.maxFieldBytes))])
            #expect(try store.item("i")?.item.attributeSet.title?.utf8.count == ActivityRules.maxFieldBytes)
        }
    }

    @Test("userInfo nests at most 16 deep, which reads back; deeper is refused (Protocol Buffers would not decode its event)")
    func userInfoDepth() throws {
        func nested(_ depth: Int) -> UserInfoValue {
            var value: UserInfoValue = "leaf"
            for level in 0..<depth { value = level % 2 == 0 ? .array([value]) : .dictionary(["d": value]) }
            return value
        }
        try withStore { store in
            try store.declareActivityTypes([viewOrder])
            try store.createActivity(makeActivity("deep") { $0.userInfo = ["k": nested(16)] })
            #expect(try store.activity("deep")?.activity.userInfo["k"] == nested(16))
            #expect { try store.createActivity(makeActivity("deeper") { $0.userInfo = ["k": nested(17)] }) } throws: {
                ($0 as? ActivityError)?.code == .fieldTooLarge && "\($0)".contains("nested more than 16")
            }
        }
    }
}
