import Foundation
import LMDB
import TextIndex

/// A Core Spotlight item (`CSSearchableItem`, SPEC §4) as a command takes it.
///
/// ```swift
/// var item = SearchableItem(uniqueIdentifier: "order-1", domainIdentifier: "orders.2024")
/// item.attributeSet.title = "Oat latte"
/// item.attributeSet.keywords = ["coffee"]
/// try store.indexSearchableItems([item])
///
/// var update = SearchableItem(uniqueIdentifier: "order-1", isUpdate: true)
/// update.attributeSet.rating = 5                 // replaced
/// update.attributesToRemove = ["keywords"]       // removed ("keywords": null in JSON)
/// try store.indexSearchableItems([update])       // title kept
/// ```
///
/// `expirationDate` nil means: one calendar month after the time the item is
/// indexed (UTC), computed when the command runs and recorded in its event;
/// for an update, nil keeps the existing item's expiration.
public struct SearchableItem: Sendable, Hashable {
    /// Required; 1 to 256 UTF-8 bytes; the key of the item.
    public var uniqueIdentifier: String
    /// Dot-separated components (`orders.2024`), none empty.
    public var domainIdentifier: String?
    public var attributeSet: ContentAttributeSet
    /// After it (at it, exactly) the item is left out of search and query.
    public var expirationDate: Date?
    /// False: the item replaces any item with its identifier. True: merged
    /// into the existing item; dropped (and reported) when there is none.
    public var isUpdate: Bool
    /// For an update: attribute names (of ``ContentAttributeSet/knownAttributes``)
    /// to remove from the existing item, what `null` means in JSON. Ignored
    /// when `isUpdate` is false (absent is absent).
    public var attributesToRemove: Set<String>

    public init(uniqueIdentifier: String, domainIdentifier: String? = nil, attributeSet: ContentAttributeSet = ContentAttributeSet(),
                expirationDate: Date? = nil, isUpdate: Bool = false, attributesToRemove: Set<String> = []) {
        self.uniqueIdentifier = uniqueIdentifier
        self.domainIdentifier = domainIdentifier
        self.attributeSet = attributeSet
        self.expirationDate = expirationDate
        self.isUpdate = isUpdate
        self.attributesToRemove = attributesToRemove
    }

    /// The same item with dates at the store's precision (whole microseconds).
    var normalized: SearchableItem {
        var copy = self
        copy.attributeSet = attributeSet.normalized
        copy.expirationDate = expirationDate?.roundedToMicroseconds
        return copy
    }
}

// MARK: JSON (SPEC §6 and §7)

extension SearchableItem {
    /// Reads an item of an `indexSearchableItems` line:
    /// `{"uniqueIdentifier":"order-1","domainIdentifier":"orders","attributeSet":{"title":"Latte","keywords":["coffee"]},
    ///   "expirationDate":"2026-12-31T00:00:00Z","isUpdate":false}`.
    /// In `attributeSet`, `null` marks an attribute to remove (for an
    /// update). An unknown member or attribute name is an error that lists
    /// the known ones. Identifier and domain rules are checked by the command.
    public init(json: JSONValue, operation: String = "indexSearchableItems") throws {
        guard case .object(let list) = json else {
            throw ActivityError(.invalidValue, operation: operation, field: "items", value: json.kindName, allowed: "an object")
        }
        // By bytes; a parsed object never repeats a name (the parser refuses
        // it), one built in code keeps its last value, as JSONValue's subscript does.
        let members = Dictionary(list.map { (Name($0.key), $0.value) }, uniquingKeysWith: { _, last in last })
        let knownMembers: Set<Name> = ["uniqueIdentifier", "domainIdentifier", "attributeSet", "expirationDate", "isUpdate"]
        for name in members.keys.sorted() where !knownMembers.contains(name) {
            throw ActivityError(.malformedOperation, operation: operation, field: "items", value: name.string,
                                allowed: "uniqueIdentifier, domainIdentifier, attributeSet, expirationDate, isUpdate")
        }
        guard case .string(let id)? = members["uniqueIdentifier"] else {
            throw ActivityError(.invalidValue, operation: operation, field: "uniqueIdentifier",
                                value: members["uniqueIdentifier"]?.serialized() ?? "missing", allowed: "a string")
        }
        self.init(uniqueIdentifier: id)
        switch members["domainIdentifier"] {
        case nil, .null?: break
        case .string(let domain)?: domainIdentifier = domain
        case let other?:
            throw ActivityError(.invalidValue, operation: operation, field: "domainIdentifier", value: other.serialized(), allowed: "a string")
        }
        switch members["expirationDate"] {
        case nil, .null?: break
        case .string(let text)? where ISO8601Time.date(from: text) != nil: expirationDate = ISO8601Time.date(from: text)
        case let other?:
            throw ActivityError(.invalidValue, operation: operation, field: "expirationDate", value: other.serialized(),
                                allowed: "an ISO-8601 time such as 2026-11-22T10:00:00Z")
        }
        switch members["isUpdate"] {
        case nil, .null?: break
        case .bool(let flag)?: isUpdate = flag
        case let other?:
            throw ActivityError(.invalidValue, operation: operation, field: "isUpdate", value: other.serialized(), allowed: "true or false")
        }
        if let set = members["attributeSet"] {
            if case .object(let attributes) = set {
                // ContentAttributeSet(json:) skips nulls; here a null is a
                // removal, so its name must be a known one too.
                let lastValues = Dictionary(attributes.map { (Name($0.key), $0.value) }, uniquingKeysWith: { _, last in last })
                for (key, value) in lastValues.sorted(by: { $0.key < $1.key }) where value == .null {
                    let name = key.string
                    guard ContentAttributeSet.knownAttributes.contains(name) else {
                        throw ActivityError(.unknownAttribute, operation: operation, field: "attributeSet", value: name,
                                            allowed: ContentAttributeSet.knownAttributes.joined(separator: ", "))
                    }
                    attributesToRemove.insert(name)
                }
            }
            do {
                attributeSet = try ContentAttributeSet(json: set, operation: operation)
            } catch var error as ActivityError {
                // The attribute set is called attributeSet on items.
                error.field = error.field.map { $0.replacingOccurrences(of: "contentAttributeSet", with: "attributeSet") }
                throw error
            }
        }
    }

    /// The JSON object of `eventlog items` (SPEC §7): absent fields omitted,
    /// dates in ISO-8601 UTC; `isUpdate` and removals are not part of a stored item.
    public var json: JSONValue {
        // In the order the writer sorts keys to: written as they are.
        var members: [(key: String, value: JSONValue)] = [("attributeSet", attributeSet.json)]
        if let domainIdentifier { members.append(("domainIdentifier", .string(domainIdentifier))) }
        if let expirationDate { members.append(("expirationDate", .string(ISO8601Time.string(from: expirationDate)))) }
        members.append(("uniqueIdentifier", .string(uniqueIdentifier)))
        return .object(members)
    }
}

// MARK: Protocol Buffers

extension SearchableItem {
    /// The stored form; `expirationDate` must be set (it is, once a command ran).
    var proto: Activitylog_V1_SearchableItem {
        var m = Activitylog_V1_SearchableItem()
        m.uniqueIdentifier = uniqueIdentifier
        if let domainIdentifier { m.domainIdentifier = domainIdentifier }
        m.attributeSet = attributeSet.proto
        m.expirationDateMicros = expirationDate?.microsecondsRounded ?? 0
        return m
    }

    /// This (normalized) item as it replaces whatever its identifier held,
    /// in a command run at `time`: without an expiration, it gets the
    /// default one (and `defaultExpiration` says so); nothing to remove.
    func replacement(at time: Date) -> (item: SearchableItem, defaultExpiration: Bool) {
        var replacement = self
        replacement.attributesToRemove = []
        let defaultExpiration = expirationDate == nil
        if defaultExpiration { replacement.expirationDate = SpotlightRules.defaultExpiration(indexedAt: time) }
        return (replacement, defaultExpiration)
    }

    /// What a `searchableItems.indexed` event records for the item.
    func recorded(defaultExpiration: Bool) -> Activitylog_V1_SearchableItem {
        var m = proto
        m.defaultExpiration = defaultExpiration
        return m
    }

    init(proto m: Activitylog_V1_SearchableItem) {
        self.init(uniqueIdentifier: m.uniqueIdentifier, domainIdentifier: m.hasDomainIdentifier ? m.domainIdentifier : nil,
                  attributeSet: ContentAttributeSet(proto: m.attributeSet), expirationDate: Date(microseconds: m.expirationDateMicros))
    }
}
