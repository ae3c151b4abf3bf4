/// The text fields the index scores separately, with their BM25F weights.
///
/// A posting records, per document, in which of these eight fields the term
/// occurs (a bit mask) and how often. Field names other than the first seven
/// share the slot ``other``.
///
/// | slot | field | weight |
/// |---|---|---|
/// | 0 | title | 3.0 |
/// | 1 | displayName | 2.0 |
/// | 2 | keywords | 2.0 |
/// | 3 | contentDescription | 1.0 |
/// | 4 | authorNames | 1.0 |
/// | 5 | comment | 1.0 |
/// | 6 | contentType | 1.0 |
/// | 7 | any other name | 1.0 |
///
/// ```swift
/// IndexField(name: "title").weight      // 3.0
/// IndexField(name: "myNotes") == .other // true
/// ```
public struct IndexField: Hashable, Sendable {
    /// The slot, 0 to 7: the bit of the field in a posting's mask.
    public let slot: Int

    public static let title = IndexField(slot: 0)
    public static let displayName = IndexField(slot: 1)
    public static let keywords = IndexField(slot: 2)
    public static let contentDescription = IndexField(slot: 3)
    public static let authorNames = IndexField(slot: 4)
    public static let comment = IndexField(slot: 5)
    public static let contentType = IndexField(slot: 6)
    public static let other = IndexField(slot: 7)

    public static let count = 8
    public static let names = ["title", "displayName", "keywords", "contentDescription", "authorNames", "comment", "contentType"]
    /// BM25F weights by slot: title above displayName and keywords, above the rest.
    public static let weights: [Double] = [3.0, 2.0, 2.0, 1.0, 1.0, 1.0, 1.0, 1.0]

    init(slot: Int) { self.slot = slot }

    /// The slot of a field name.
    public init(name: String) {
        switch name {
        case "title": slot = 0
        case "displayName": slot = 1
        case "keywords": slot = 2
        case "contentDescription": slot = 3
        case "authorNames": slot = 4
        case "comment": slot = 5
        case "contentType": slot = 6
        default: slot = 7
        }
    }

    public var weight: Double { IndexField.weights[slot] }
    var bit: UInt8 { 1 << UInt8(slot) }
}
