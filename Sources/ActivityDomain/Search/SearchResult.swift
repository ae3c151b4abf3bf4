import Foundation
import TextIndex

/// A search or query hit with its document, read in the same transaction:
/// ``SpaceReader/searchDocuments(_:now:limit:)``, ``UserScoped/searchDocuments(_:now:limit:)``.
///
/// ```swift
/// for result in try alice.searchDocuments("latte", now: Date()) {
///     switch result.document {
///     case .item(let stored): print(result.hit.score, stored.item.attributeSet.title ?? "")
///     case .activity(let saved): print(result.hit.score, saved.activity.title ?? "")
///     }
/// }
/// ```
public struct SearchResult: Sendable, Hashable {
    public var hit: SearchHit
    public var document: Document

    /// What a hit names: a searchable item (kind `item`) or a saved activity
    /// eligible for search (kind `activity`, identified by its key).
    public enum Document: Sendable, Hashable {
        case item(IndexedItem)
        case activity(SavedActivity)
    }

    public init(hit: SearchHit, document: Document) {
        self.hit = hit
        self.document = document
    }
}

extension SearchResult: JSONRepresentable {
    /// `{"kind","identifier","score"}` (the hit, as `eventlog search --json`
    /// prints it) with `item` (``IndexedItem``'s JSON) or `saved`
    /// (``SavedActivity``'s JSON).
    public var json: JSONValue {
        // In the order the writer sorts them to (no member shared: nothing to merge).
        let identifier: (key: String, value: JSONValue) = ("identifier", .string(hit.identifier))
        let kind: (key: String, value: JSONValue) = ("kind", .string(hit.kind)), score: (key: String, value: JSONValue) = ("score", .double(hit.score))
        switch document {
        case .item(let item): return .object([identifier, ("item", item.json), kind, score])
        case .activity(let saved): return .object([identifier, kind, ("saved", saved.json), score])
        }
    }

    public init(json: JSONValue) throws {
        guard case .string(let kind)? = json["kind"], case .string(let identifier)? = json["identifier"] else {
            throw ActivityError(.invalidValue, operation: "decode SearchResult", field: "kind", value: json.serialized(),
                                allowed: "an object with kind, identifier and score")
        }
        let score: Double
        switch json["score"] {
        case .double(let d)?: score = d
        case .integer(let i)?: score = Double(i)
        default:
            throw ActivityError(.invalidValue, operation: "decode SearchResult", field: "score", value: json["score"]?.serialized() ?? "missing",
                                allowed: "a number")
        }
        let hit = SearchHit(kind: kind, identifier: identifier, score: score)
        if let item = json["item"] {
            self.init(hit: hit, document: .item(try IndexedItem(json: item)))
        } else if let saved = json["saved"] {
            self.init(hit: hit, document: .activity(try SavedActivity(json: saved)))
        } else {
            throw ActivityError(.invalidValue, operation: "decode SearchResult", field: "item", value: "missing",
                                allowed: "item (a searchable item) or saved (a saved activity)")
        }
    }
}
