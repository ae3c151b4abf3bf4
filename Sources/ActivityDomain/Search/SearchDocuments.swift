import Foundation
import TextIndex

/// What the keyword index holds for a searchable item and for a saved
/// activity (SPEC §5): the text fields, the attributes the query language
/// reads, and the expiration. `Docs/Search.md` ("What is indexed from items
/// and saved activities") has the table.
///
/// ```swift
/// let doc = SearchDocuments.item(indexedItem.item.proto)      // kind "item"
/// let doc = SearchDocuments.activity(key: "order-42", copy)   // kind "activity"
/// ```
///
/// What an item gives here is derived again, from the item's bytes in the
/// log, whenever the index reads a stored item document (``ItemContentReference``):
/// a change of this mapping must bump the keyword projection's version, so
/// that stores rebuild their index with it, and must be made in
/// ``ItemNamedContent`` too, which gives one name of it from the item's
/// wire bytes (its exactness test compares the two).
enum SearchDocuments {
    static let itemKind = "item"
    static let activityKind = "activity"

    static func item(_ item: Activitylog_V1_SearchableItem) -> IndexDocument {
        var doc = IndexDocument(kind: itemKind, identifier: item.uniqueIdentifier, fields: SearchDocuments.emptyFields(),
                                attributes: SearchDocuments.emptyAttributes())
        addContent(item.attributeSet, to: &doc, title: nil, keywords: [])
        if item.hasDomainIdentifier { doc.attributes["domainIdentifier"] = .string(item.domainIdentifier) }
        doc.expirationDate = Date(microseconds: item.expirationDateMicros)
        return doc
    }

    /// A saved copy eligible for search, under its saved key. Its own `title`
    /// and `keywords` join those of its `contentAttributeSet`.
    static func activity(key: String, _ copy: Activitylog_V1_Activity) -> IndexDocument {
        var doc = IndexDocument(kind: activityKind, identifier: key, fields: SearchDocuments.emptyFields(),
                                attributes: SearchDocuments.emptyAttributes())
        addContent(copy.hasContentAttributeSet ? copy.contentAttributeSet : nil, to: &doc,
                   title: copy.hasTitle ? copy.title : nil, keywords: copy.keywords)
        doc.attributes["activityType"] = .string(copy.activityType)
        if copy.hasExpirationDateMicros { doc.expirationDate = Date(microseconds: copy.expirationDateMicros) }
        return doc
    }

    /// Room for the seven text fields (and the six attributes) a document
    /// can have, made at that size: growing field by field rehashed each
    /// time, and `reserveCapacity` on an empty dictionary cost as much.
    static func emptyFields() -> [String: [String]] { Dictionary(minimumCapacity: 7) }
    static func emptyAttributes() -> [String: AttributeValue] { Dictionary(minimumCapacity: 6) }

    /// `values` with equal values once, first occurrences in order: a title
    /// given twice would count its words twice. (Only lists are
    /// deduplicated: hashing every long description costs. A short list is
    /// scanned: `==` is the equality a set would use.)
    static func uniqued(_ values: [String]) -> [String] {
        guard values.count > 1 else { return values }
        guard values.count > 16 else {
            var unique: [String] = []
            unique.reserveCapacity(values.count)
            for v in values where !unique.contains(v) { unique.append(v) }
            return unique
        }
        var seen = Set<String>()
        return values.filter { seen.insert($0).inserted }
    }

    private static func addContent(_ set: Activitylog_V1_ContentAttributes?, to doc: inout IndexDocument,
                                   title: String?, keywords: [String]) {
        func field(_ name: String, _ values: [String]) {
            if !values.isEmpty { doc.fields[name] = uniqued(values) }
        }
        let set = set ?? Activitylog_V1_ContentAttributes()
        field("title", [title, set.hasTitle ? set.title : nil].compactMap { $0 })
        field("displayName", set.hasDisplayName ? [set.displayName] : [])
        field("keywords", keywords + set.keywords)
        field("contentDescription", set.hasContentDescription ? [set.contentDescription] : [])
        field("authorNames", set.authorNames)
        field("comment", set.hasComment ? [set.comment] : [])
        field("contentType", set.hasContentType ? [set.contentType] : [])
        // thumbnailData is never indexed.
        if set.hasContentCreationDateMicros { doc.attributes["contentCreationDate"] = .date(Date(microseconds: set.contentCreationDateMicros)) }
        if set.hasContentModificationDateMicros {
            doc.attributes["contentModificationDate"] = .date(Date(microseconds: set.contentModificationDateMicros))
        }
        if set.hasRating { doc.attributes["rating"] = .number(set.rating) }
        if set.hasLatitude { doc.attributes["latitude"] = .number(set.latitude) }
        if set.hasLongitude { doc.attributes["longitude"] = .number(set.longitude) }
    }
}
