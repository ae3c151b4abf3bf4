import ActivityDomain
import Foundation
import Logging
import TextIndex

/// `eventlog query` and `eventlog search` on a small store of items and
/// saved activities in several languages: the input is the expression (and
/// the search text). A malformed expression must be a ``QueryError``.
enum QueryTarget {
    static let now = Date(timeIntervalSince1970: 1_795_000_000)   // 2026-11-19
    static let fixture = Fixture { try ActivityStore(path: Scratch.path("query"), options: FuzzStores.fast).filled(with: FuzzStores.searchableLines) }

    static func run(_ input: [UInt8]) throws {
        let store = try fixture.get()
        let text = String(decoding: input, as: UTF8.self)
        do {
            _ = try store.query(text, now: now)
        } catch is QueryError {
        } catch {
            throw FuzzFailure("query \(text.debugDescription) threw \(type(of: error)): \(error), not a QueryError")
        }
        do {
            _ = try store.search(text, now: now, limit: 5)
        } catch {
            throw FuzzFailure("search \(text.debugDescription) threw \(type(of: error)): \(error)")
        }
    }
}

/// The fixture stores' contents and options.
enum FuzzStores {
    static var fast: ActivityStoreOptions {
        var options = ActivityStoreOptions()
        options.store.durability = .noSync
        options.store.initialMapSize = 16 << 20
        // Damaged snapshots are logged as they are skipped: millions of times here.
        var logger = Logger(label: "eventlog-fuzz")
        logger.logLevel = .critical
        options.store.logger = logger
        return options
    }

    /// Activities (two saved), items with every kind of attribute, text in five languages.
    static let searchableLines = [
        #"{"op":"declareActivityTypes","types":["com.example.app.viewOrder"],"at":"2026-11-01T10:00:00Z"}"#,
        #"{"op":"createActivity","activity":"a1","activityType":"com.example.app.viewOrder","device":"phone","title":"Oat Latte","userInfo":{"orderID":42,"when":{"$date":"2026-11-01T10:00:00Z"}},"eligibleForSearch":true,"eligibleForPrediction":true,"persistentIdentifier":"order-42","keywords":["coffee","oat"],"contentAttributeSet":{"contentDescription":"Café con leche","rating":4.5},"at":"2026-11-01T10:00:00Z"}"#,
        #"{"op":"becomeCurrent","activity":"a1","at":"2026-11-01T10:01:00Z"}"#,
        #"{"op":"createActivity","activity":"a2","activityType":"com.example.app.viewOrder","device":"tablet","title":"NSUserActivityオブジェクト","eligibleForSearch":true,"keywords":["アプリ"],"at":"2026-11-01T10:02:00Z"}"#,
        #"{"op":"becomeCurrent","activity":"a2","at":"2026-11-01T10:03:00Z"}"#,
        #"{"op":"indexSearchableItems","items":[{"uniqueIdentifier":"order-1","domainIdentifier":"orders.2024","attributeSet":{"title":"Latte","displayName":"MyWindowClass","keywords":["coffee","game::strategy"],"authorNames":["Ana Núñez"],"rating":3,"latitude":48.85,"longitude":2.35,"contentCreationDate":"2026-10-01T00:00:00Z"}},{"uniqueIdentifier":"order-2","domainIdentifier":"orders","attributeSet":{"title":"核心区别 Core Spotlight","contentDescription":"हिन्दी में खोज","comment":"niño","contentType":"public.text"},"expirationDate":"2027-01-01T00:00:00Z"},{"uniqueIdentifier":"doc-3","attributeSet":{"title":"Expired","keywords":["old"]},"expirationDate":"2026-01-01T00:00:00Z"}],"at":"2026-11-02T00:00:00Z"}"#,
    ]
}

extension ActivityStore {
    /// Writes `lines` (operations of SPEC §6) when the store is empty.
    func filled(with lines: [String]) throws -> ActivityStore {
        if try head() == 0 {
            let decoder = OperationDecoder()
            try write(try lines.map { try decoder.decode($0) })
        }
        return self
    }
}

extension QueryTarget {
    /// The query language's forms (SPEC §5) and free text.
    static let examples = [
        #"title == "latte*"cd && (keywords == "coffee"c || domainIdentifier == "orders")"#,
        #"displayName == "Window"w"#,
        #"title != "*""#,
        #"contentDescription == "cafe leche"td"#,
        #"rating >= 3 && rating < 5"#,
        #"InRange(contentCreationDate, $time.today(-60), $time.now)"#,
        #"expirationDate > $time.iso("2026-11-22T10:00:00Z")"#,
        #"kind == "activity" || activityType == "com.example.*""#,
        #"uniqueIdentifier == "order-\"1\\""#,
        #"latitude > 48.5 && longitude <= 2.4"#,
        "核心", "अंग्रेज़ी", "coffee la", "オブジェクト",
    ]
}
