import Foundation

/// A document as the text index takes it: an identity (`kind` and
/// `identifier`), text fields that are tokenized for free-text search, and
/// structured attributes for the query language.
///
/// ```swift
/// var doc = IndexDocument(kind: "item", identifier: "order-1")
/// doc.fields["title"] = ["Oat latte"]
/// doc.fields["keywords"] = ["coffee", "game::strategy"]
/// doc.attributes["domainIdentifier"] = .string("orders.2024")
/// doc.attributes["rating"] = .number(4)
/// doc.expirationDate = Date(timeIntervalSince1970: 1_800_000_000)
/// ```
///
/// Text fields are matched by the query language as strings too
/// (`title == "Oat*"`). A name is either a field or an attribute, not both;
/// `kind` and `expirationDate` are neither (they are the document's own).
/// `kind` and `expirationDate` are queryable as attributes of those names;
/// `uniqueIdentifier` is the `identifier` unless an attribute of that name
/// is given.
public struct IndexDocument: Sendable, Equatable {
    /// What the document is, e.g. `item` or `activity`; 1 to 64 bytes.
    public var kind: String
    /// Unique within its kind; 1 to 256 UTF-8 bytes.
    public var identifier: String
    /// Text fields by name, each with one or more values (`keywords`, `authorNames`).
    public var fields: [String: [String]]
    /// Structured values by name.
    public var attributes: [String: AttributeValue]
    /// After this instant the document is left out of results.
    public var expirationDate: Date?
    /// Where the caller keeps this document's content, when it keeps it:
    /// then the index stores these bytes instead of ``fields`` and
    /// ``attributes`` and reads them back through a
    /// ``TextIndex/ContentSource``, which must give them exactly as they
    /// were upserted (the keyword projection refers to an item's bytes in
    /// the log). At most 64 bytes.
    public var contentReference: [UInt8]?

    public init(kind: String, identifier: String, fields: [String: [String]] = [:],
                attributes: [String: AttributeValue] = [:], expirationDate: Date? = nil) {
        self.kind = kind
        self.identifier = identifier
        self.fields = fields
        self.attributes = attributes
        self.expirationDate = expirationDate
    }

    /// Whether the document is expired at `now` (its expiration date is at or before `now`).
    public func isExpired(at now: Date) -> Bool {
        guard let expirationDate else { return false }
        return expirationDate <= now
    }

    /// Throws when the identity or a name breaks the limits.
    func validate() throws {
        let kindBytes = kind.utf8
        guard !kindBytes.isEmpty, kindBytes.count <= 64, !IndexDocument.containsNUL(kind) else { throw TextIndexError.invalidKind(kind) }
        guard !identifier.isEmpty else { throw TextIndexError.emptyIdentifier(kind: kind) }
        let n = identifier.utf8.count
        guard n <= TextIndex.maximumIdentifierLength else { throw TextIndexError.identifierTooLong(identifier, bytes: n) }
        for name in fields.keys {
            try IndexDocument.validateName(name)
            if attributes[name] != nil { throw TextIndexError.duplicateName(name) }
        }
        for name in attributes.keys { try IndexDocument.validateName(name) }
        try IndexDocument.validate(contentReference: contentReference)
    }

    /// Throws unless `reference` is absent or 1 to 64 bytes.
    static func validate(contentReference reference: [UInt8]?) throws {
        if let reference, reference.isEmpty || reference.count > 64 {
            throw TextIndexError.invalidContentReference(bytes: reference.count)
        }
    }

    /// Whether `s` has a NUL byte (`memchr` over a native string's bytes).
    static func containsNUL(_ s: String) -> Bool {
        s.utf8.withContiguousStorageIfAvailable { b in
            guard let base = b.baseAddress else { return false }
            return memchr(base, 0, b.count) != nil
        } ?? s.utf8.contains(0)
    }

    static func validateName(_ name: String) throws {
        let bytes = name.utf8
        guard !bytes.isEmpty, bytes.count <= 64, !containsNUL(name) else { throw TextIndexError.invalidName(name) }
        // These two are the document's own (`kind`, `expirationDate`).
        guard name != "kind" && name != "expirationDate" else { throw TextIndexError.invalidName(name) }
    }
}
