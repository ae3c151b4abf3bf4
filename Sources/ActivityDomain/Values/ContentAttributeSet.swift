import Foundation
import TextIndex

/// The attributes of SPEC §4 that describe content: an activity's
/// `contentAttributeSet`, and (for the Core Spotlight side) a searchable
/// item's `attributeSet`.
///
/// ```swift
/// var attributes = ContentAttributeSet()
/// attributes.title = "Oat latte"
/// attributes.keywords = ["coffee", "oat"]
/// attributes.rating = 4.5
/// ```
///
/// `thumbnailData` is stored but never indexed. Keywords and author names
/// keep the caller's order.
public struct ContentAttributeSet: Sendable, Hashable {
    public var title: String?
    public var displayName: String?
    public var contentDescription: String?
    public var keywords: [String] = []
    public var authorNames: [String] = []
    public var comment: String?
    public var contentType: String?
    public var contentCreationDate: Date?
    public var contentModificationDate: Date?
    public var rating: Double?
    public var latitude: Double?
    public var longitude: Double?
    public var thumbnailData: Data?

    public init() {}

    /// The attribute names SPEC §4 knows, in its order; any other is an error.
    public static let knownAttributes = [
        "title", "displayName", "contentDescription", "keywords", "authorNames", "comment", "contentType",
        "contentCreationDate", "contentModificationDate", "rating", "latitude", "longitude", "thumbnailData",
    ]

    /// True when no attribute is set.
    public var isEmpty: Bool { self == ContentAttributeSet() }

    var normalized: ContentAttributeSet {
        var copy = self
        copy.contentCreationDate = contentCreationDate?.roundedToMicroseconds
        copy.contentModificationDate = contentModificationDate?.roundedToMicroseconds
        return copy
    }

    // MARK: Protocol Buffers

    var proto: Activitylog_V1_ContentAttributes {
        var m = Activitylog_V1_ContentAttributes()
        if let title { m.title = title }
        if let displayName { m.displayName = displayName }
        if let contentDescription { m.contentDescription = contentDescription }
        m.keywords = keywords
        m.authorNames = authorNames
        if let comment { m.comment = comment }
        if let contentType { m.contentType = contentType }
        if let contentCreationDate { m.contentCreationDateMicros = contentCreationDate.microsecondsRounded }
        if let contentModificationDate { m.contentModificationDateMicros = contentModificationDate.microsecondsRounded }
        if let rating { m.rating = rating }
        if let latitude { m.latitude = latitude }
        if let longitude { m.longitude = longitude }
        if let thumbnailData { m.thumbnailData = thumbnailData }
        return m
    }

    init(proto m: Activitylog_V1_ContentAttributes) {
        title = m.hasTitle ? m.title : nil
        displayName = m.hasDisplayName ? m.displayName : nil
        contentDescription = m.hasContentDescription ? m.contentDescription : nil
        keywords = m.keywords
        authorNames = m.authorNames
        comment = m.hasComment ? m.comment : nil
        contentType = m.hasContentType ? m.contentType : nil
        contentCreationDate = m.hasContentCreationDateMicros ? Date(microseconds: m.contentCreationDateMicros) : nil
        contentModificationDate = m.hasContentModificationDateMicros ? Date(microseconds: m.contentModificationDateMicros) : nil
        rating = m.hasRating ? m.rating : nil
        latitude = m.hasLatitude ? m.latitude : nil
        longitude = m.hasLongitude ? m.longitude : nil
        thumbnailData = m.hasThumbnailData ? m.thumbnailData : nil
    }

    // MARK: JSON

    /// The JSON object form: dates as ISO-8601 strings, `thumbnailData` as base64.
    public var json: JSONValue {
        // Built in the order the writer sorts keys to (by UTF-8 bytes), so
        // that it writes them as they are: no dictionary, no sort.
        var members: [(key: String, value: JSONValue)] = []
        members.reserveCapacity(8)
        if !authorNames.isEmpty { members.append(("authorNames", .array(authorNames.map(JSONValue.string)))) }
        if let comment { members.append(("comment", .string(comment))) }
        if let contentCreationDate { members.append(("contentCreationDate", .string(ISO8601Time.string(from: contentCreationDate)))) }
        if let contentDescription { members.append(("contentDescription", .string(contentDescription))) }
        if let contentModificationDate {
            members.append(("contentModificationDate", .string(ISO8601Time.string(from: contentModificationDate))))
        }
        if let contentType { members.append(("contentType", .string(contentType))) }
        if let displayName { members.append(("displayName", .string(displayName))) }
        if !keywords.isEmpty { members.append(("keywords", .array(keywords.map(JSONValue.string)))) }
        if let latitude { members.append(("latitude", .double(latitude))) }
        if let longitude { members.append(("longitude", .double(longitude))) }
        if let rating { members.append(("rating", .double(rating))) }
        if let thumbnailData { members.append(("thumbnailData", .string(thumbnailData.base64EncodedString()))) }
        if let title { members.append(("title", .string(title))) }
        return .object(members)
    }

    /// Reads the JSON object form. An unknown attribute name is an error
    /// that lists the known ones; `null` leaves an attribute unset.
    public init(json: JSONValue, operation: String = "contentAttributeSet") throws {
        guard case .object(let members) = json else {
            throw ActivityError(.invalidValue, operation: operation, field: "contentAttributeSet",
                                value: json.kindName, allowed: "an object")
        }
        func fail(_ name: String, _ value: JSONValue, _ allowed: String) -> ActivityError {
            ActivityError(.invalidValue, operation: operation, field: "contentAttributeSet.\(name)",
                          value: value.serialized(), allowed: allowed)
        }
        func string(_ name: String, _ value: JSONValue) throws -> String {
            guard case .string(let s) = value else { throw fail(name, value, "a string") }
            return s
        }
        func strings(_ name: String, _ value: JSONValue) throws -> [String] {
            guard case .array(let values) = value else { throw fail(name, value, "an array of strings") }
            return try values.map { try string(name, $0) }
        }
        func number(_ name: String, _ value: JSONValue) throws -> Double {
            switch value {
            case .integer(let i): return Double(i)
            case .double(let d): return d
            default: throw fail(name, value, "a number")
            }
        }
        func date(_ name: String, _ value: JSONValue) throws -> Date {
            guard case .string(let s) = value, let date = ISO8601Time.date(from: s) else {
                throw fail(name, value, "an ISO-8601 time from \(ISO8601Time.range), such as 2026-11-22T10:00:00Z")
            }
            return date
        }
        self.init()
        for (name, value) in members {
            if case .null = value { continue }
            switch name {
            case "title": title = try string(name, value)
            case "displayName": displayName = try string(name, value)
            case "contentDescription": contentDescription = try string(name, value)
            case "keywords": keywords = try strings(name, value)
            case "authorNames": authorNames = try strings(name, value)
            case "comment": comment = try string(name, value)
            case "contentType": contentType = try string(name, value)
            case "contentCreationDate": contentCreationDate = try date(name, value)
            case "contentModificationDate": contentModificationDate = try date(name, value)
            case "rating": rating = try number(name, value)
            case "latitude": latitude = try number(name, value)
            case "longitude": longitude = try number(name, value)
            case "thumbnailData":
                guard let data = Data(base64Encoded: try string(name, value)) else { throw fail(name, value, "base64") }
                thumbnailData = data
            default:
                throw ActivityError(.unknownAttribute, operation: operation, field: "contentAttributeSet", value: name,
                                    allowed: Self.knownAttributes.joined(separator: ", "))
            }
        }
        self = normalized
    }
}
