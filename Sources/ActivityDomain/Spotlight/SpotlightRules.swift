import Foundation
import TextIndex

/// The stateless rules of SPEC §4 for searchable items and index batches:
/// identifiers, domains, attribute values, client states, and the default
/// expiration. The rules that need the store (merging into an existing item,
/// the stored client state) are in `ActivityCommandExecutor+Spotlight.swift`.
///
/// ```swift
/// try SpotlightRules.checkDomainIdentifier("orders.2024", operation: "indexSearchableItems")   // fine
/// try SpotlightRules.checkDomainIdentifier("orders..2024", operation: "indexSearchableItems")  // malformedDomainIdentifier
/// SpotlightRules.isInDomain("orders.2024", "orders")   // true
/// SpotlightRules.isInDomain("orders2024", "orders")    // false
/// ```
public enum SpotlightRules {
    /// The longest client state, in bytes.
    public static let maxClientStateBytes = 250

    /// Throws unless `domain` is 1 to 256 UTF-8 bytes of dot-separated
    /// components, none empty, no NUL (`orders`, `orders.2024`; not `.orders`,
    /// `orders.`, `orders..2024`).
    public static func checkDomainIdentifier(_ domain: String, operation: String, field: String = "domainIdentifier") throws {
        // Empty is one empty component: malformed rather than a missing identifier.
        if !domain.isEmpty { try ActivityRules.checkIdentifier(domain, field: field, operation: operation) }
        // NUL is refused too: the item store's domain index ends the domain at 0x00.
        if domain.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false).contains(where: \.isEmpty)
            || domain.utf8.contains(0) {
            throw ActivityError(.malformedDomainIdentifier, operation: operation, field: field, value: domain,
                                allowed: "dot-separated components, none empty and without NUL, such as orders.2024")
        }
    }

    /// Whether an item of domain `itemDomain` is in `domain` or below it,
    /// component by component: `orders.2024` is in `orders`, `orders2024` is not.
    public static func isInDomain(_ itemDomain: String, _ domain: String) -> Bool {
        isInDomain(utf8: itemDomain.utf8, domain)
    }

    /// ``isInDomain(_:_:)`` for a domain given by its bytes (an index key's), compared by bytes.
    static func isInDomain<Bytes: Collection<UInt8>>(utf8 item: Bytes, _ domain: String) -> Bool {
        let parent = domain.utf8
        guard item.starts(with: parent) else { return false }
        if item.count == parent.count { return true }
        return item[item.index(item.startIndex, offsetBy: parent.count)] == UInt8(ascii: ".")
    }

    /// Throws when an item breaks a rule that needs no store state.
    static func checkItem(_ item: SearchableItem, operation: String) throws {
        try ActivityRules.checkIdentifier(item.uniqueIdentifier, field: "uniqueIdentifier", operation: operation)
        if let domain = item.domainIdentifier { try checkDomainIdentifier(domain, operation: operation) }
        let attributes = item.attributeSet
        try ActivityRules.checkSizes(of: attributes, field: "attributeSet", operation: operation)
        for (name, number) in [("rating", attributes.rating), ("latitude", attributes.latitude), ("longitude", attributes.longitude)] {
            if let number, !number.isFinite {
                throw ActivityError(.invalidValue, operation: operation, field: "attributeSet.\(name)", value: "\(number)",
                                    allowed: "a finite number")
            }
        }
        for name in item.attributesToRemove.sorted(by: utf8Less) {
            guard ContentAttributeSet.knownAttributes.contains(name) else {
                throw ActivityError(.unknownAttribute, operation: operation, field: "attributeSet", value: name,
                                    allowed: ContentAttributeSet.knownAttributes.joined(separator: ", "))
            }
            if attributes.has(name) {
                throw ActivityError(.invalidValue, operation: operation, field: "attributeSet.\(name)", value: "a value and null",
                                    allowed: "an attribute either given or removed, not both")
            }
        }
    }

    /// Throws unless `state` is at most 250 bytes.
    static func checkClientState(_ state: Data, field: String, operation: String) throws {
        if state.count > maxClientStateBytes {
            throw ActivityError(.clientStateTooLong, operation: operation, field: field, value: "\(state.count) bytes",
                                allowed: "at most \(maxClientStateBytes) bytes")
        }
    }

    /// One calendar month after `micros` (µs since 1970, UTC), with the day
    /// clamped to the last day of the next month (Jan 31 → Feb 28, or 29 in
    /// a leap year) and the time of day kept, at most the last second of
    /// the year 9999 (``ISO8601Time/latestMicroseconds``). Integer
    /// arithmetic, no calendar object: the same result everywhere.
    public static func oneCalendarMonth(afterMicroseconds micros: Int64) -> Int64 {
        var days = micros / 86_400_000_000
        var rest = micros % 86_400_000_000
        if rest < 0 { rest += 86_400_000_000; days -= 1 }
        var (year, month, day) = ISO8601Time.civil(fromDays: days)
        month += 1
        if month > 12 { month = 1; year += 1 }
        day = min(day, ISO8601Time.daysIn(month: month, year: year))
        // Past 9999-12-31 a time no longer prints in four digits, nor parses back: the last second of 9999 it is.
        return min(ISO8601Time.days(fromCivil: year, month, day) * 86_400_000_000 + rest, ISO8601Time.latestMicroseconds)
    }

    /// The default expiration of an item indexed at `time`: one calendar
    /// month later, to the microsecond of the event's recorded time.
    public static func defaultExpiration(indexedAt time: Date) -> Date {
        Date(microseconds: oneCalendarMonth(afterMicroseconds: time.eventMicroseconds))
    }
}
