import Foundation
import Testing

/// What `eventlog` prints, byte for byte: the JSON of SPEC §7 (the library's
/// ActivityJSON prints it now; these are the bytes the command line printed
/// before it did), and tables that line up in every script.
@Suite("Output, byte for byte")
struct OutputShapeTests {
    /// Each command's --json output for `Sample.good`, as printed by 82ce6ab.
    static let expected: [(arguments: [String], output: String)] = [
        (["current"], #"""
        [
        {"activity":"a2","activityType":"com.example.app.viewOrder","device":"laptop","title":"Cappuccino"},
        {"activity":"a1","activityType":"com.example.app.viewOrder","device":"phone","title":"Oat latte"},
        {"activity":"a3","activityType":"com.example.app.viewOrder","device":"tablet","title":"抹茶ラテ"}
        ]
        """#),
        (["saved"], #"""
        [
        {"activity":"a3","activityType":"com.example.app.viewOrder","key":"a3","keywords":[],"title":"抹茶ラテ","userInfo":{}},
        {"activity":"a1","activityType":"com.example.app.viewOrder","key":"order-42","keywords":["coffee","oat"],"persistentIdentifier":"order-42","title":"Oat latte","userInfo":{"orderID":42,"placed":{"$date":"2026-11-22T10:00:00Z"},"size":"medium"}}
        ]
        """#),
        (["items"], #"""
        [
        {"attributeSet":{"keywords":["coffee"],"rating":5.0,"title":"Oat latte"},"domainIdentifier":"menu.drinks","expirationDate":"2026-12-22T10:00:10Z","uniqueIdentifier":"menu-latte"},
        {"attributeSet":{"title":"Order one"},"domainIdentifier":"orders.2026","expirationDate":"2026-12-22T10:00:10Z","uniqueIdentifier":"order-1"},
        {"attributeSet":{"keywords":["coffee"],"title":"Order two"},"domainIdentifier":"orders.2026","expirationDate":"2026-12-22T10:00:11Z","uniqueIdentifier":"order-2"}
        ]
        """#),
        (["resolve", "orders/42"], #"""
        {"identifier":"orders/42","saved":{"activity":"a1","activityType":"com.example.app.viewOrder","key":"order-42","keywords":["coffee","oat"],"persistentIdentifier":"order-42","position":6,"savedAt":"2026-11-22T10:00:04Z","title":"Oat latte","userInfo":{"orderID":42,"placed":{"$date":"2026-11-22T10:00:00Z"},"size":"medium"}},"status":"saved"}
        """#),
        (["resolve", "order-7"], #"""
        {"identifier":"order-7","removal":{"key":"order-7","operation":"savedActivities.deleted","position":13,"removedAt":"2026-11-22T10:00:09Z"},"status":"removed"}
        """#),
        (["resolve", "nothing"], #"""
        {"identifier":"nothing","status":"unknown"}
        """#),
        (["search", "lat", "--now", Sample.now], #"""
        [
        {"identifier":"menu-latte","kind":"item","score":0.3188793414202946},
        {"identifier":"order-42","kind":"activity","score":0.3188793414202946}
        ]
        """#),
        (["query", #"kind=="item"&&rating>4"#, "--now", Sample.now], #"""
        [
        {"identifier":"menu-latte","kind":"item","score":0.0}
        ]
        """#),
        (["client-state"], #"""
        [
        {"clientState":"NDI=","index":"orders-indexer"}
        ]
        """#),
        (["users"], #"""
        [
        {"activities":3,"documents":5,"items":3,"saved":2,"user":""}
        ]
        """#),
        (["handoff", "--device", "phone", "--now", Sample.now], #"""
        [
        {"activity":"a3","activityType":"com.example.app.viewOrder","device":"tablet","title":"抹茶ラテ"},
        {"activity":"a2","activityType":"com.example.app.viewOrder","device":"laptop","title":"Cappuccino"}
        ]
        """#),
        (["log", "--from", "11", "--limit", "2"], #"""
        {"at":"2026-11-22T10:00:08Z","event":{"activity":"a3","device":"tablet"},"position":11,"type":"activity.becameCurrent","version":2}
        {"at":"2026-11-22T10:00:08Z","event":{"copy":{"activity":"a3","activityType":"com.example.app.viewOrder","device":"tablet","eligibleForHandoff":true,"eligibleForSearch":true,"title":"抹茶ラテ","userInfo":{}},"key":"a3","trigger":"SAVE_TRIGGER_BECAME_CURRENT"},"position":12,"type":"activity.saved","version":2}
        """#),
    ]

    @Test("every --json read prints the bytes it printed before ActivityJSON printed it")
    func jsonBytes() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = dir.sub("store")
        #expect(try CLI.run(["apply", "--store", store, try dir.file("good.jsonl", Sample.good)]).status == 0)
        for (arguments, output) in Self.expected {
            let run = try CLI.run(arguments + ["--store", store, "--json"])
            #expect(run.status == 0, "\(arguments): \(run.stderr)")
            #expect(run.stdout == output + "\n", "\(arguments)")
        }
    }

    @Test("tables pad by display width: Hindi syllables, CJK and emoji line up with Latin")
    func tablesLineUp() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = dir.sub("store")
        // Identifiers in UTF-8 byte order, with their width in terminal columns.
        let identifiers: [(String, Int)] = [("a", 1), ("कॉफी", 2), ("☕️", 2), ("拿铁", 4)]
        let items = identifiers.map { #"{"uniqueIdentifier":"\#($0.0)","domainIdentifier":"orders","attributeSet":{"title":"t"}}"# }
        let line = #"{"op":"indexSearchableItems","items":[\#(items.joined(separator: ","))],"at":"2026-11-22T10:00:00Z"}"#
        #expect(try CLI.run(["apply", "--store", store, try dir.file("items.jsonl", [line])]).status == 0)
        let run = try CLI.run(["items", "--store", store])
        #expect(run.status == 0, "\(run.stderr)")
        let expires = "2026-12-22T10:00:00Z"
        func padded(_ text: String, width: Int, to column: Int) -> String { text + String(repeating: " ", count: column - width) }
        let expected = [padded("IDENTIFIER", width: 10, to: 10) + "  DOMAIN  " + padded("EXPIRES", width: 7, to: 20) + "  TITLE"]
            + identifiers.map { padded($0.0, width: $0.1, to: 10) + "  orders  " + expires + "  t" }
        #expect(run.stdout == expected.joined(separator: "\n") + "\n", "\(run.stdout)")
    }
}
