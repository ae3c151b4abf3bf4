import Foundation

/// ISO-8601 times as SPEC §6 and §7 write them: UTC with a `Z`, whole
/// seconds unless the time has a fraction (then up to six digits, trailing
/// zeros dropped), e.g. `2026-11-22T10:00:00Z`, `2026-11-22T10:00:00.25Z`.
///
/// ```swift
/// let date = ISO8601Time.date(from: "2026-11-22T10:00:00Z")!
/// ISO8601Time.string(from: date)    // "2026-11-22T10:00:00Z"
/// ```
///
/// Written by hand rather than with `ISO8601DateFormatter` so that output is
/// fixed (no locale, no formatter state) and the type is trivially Sendable.
/// Parsing also accepts an offset (`+02:00`) and a lower-case `t`/`z`.
///
/// The one parser of times in the store: operations (`"at"`, dates in
/// items, activities and userInfo), the query language's `$time.iso(…)`
/// and the command line's `--now` all read times here, with one rule: a
/// day that its month does not have (`2026-02-30`) is malformed, never
/// rolled over into the next month.
public enum ISO8601Time {
    /// The time in UTC, to the microsecond (rounded to the nearest).
    public static func string(from date: Date) -> String {
        let micros = Int64((date.timeIntervalSince1970 * 1_000_000).rounded())
        var seconds = micros / 1_000_000
        var fraction = micros % 1_000_000
        if fraction < 0 { fraction += 1_000_000; seconds -= 1 }
        var days = seconds / 86_400
        var secondOfDay = seconds % 86_400
        if secondOfDay < 0 { secondOfDay += 86_400; days -= 1 }
        let (year, month, day) = civil(fromDays: days)
        if (0...9999).contains(year) {
            return formatted(year: year, month: month, day: day, secondOfDay: secondOfDay, fraction: fraction)
        }
        var text = pad(year, 4) + "-" + pad(month, 2) + "-" + pad(day, 2) + "T"
            + pad(secondOfDay / 3600, 2) + ":" + pad(secondOfDay / 60 % 60, 2) + ":" + pad(secondOfDay % 60, 2)
        if fraction != 0 {
            var digits = pad(fraction, 6)
            while digits.hasSuffix("0") { digits.removeLast() }
            text += "." + digits
        }
        return text + "Z"
    }

    /// Parses `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)`; nil when malformed,
    /// or outside years 0 to 9999 once the offset is applied (``range``).
    public static func date(from text: String) -> Date? {
        let b = Array(text.utf8)
        var i = 0
        func number(_ count: Int) -> Int64? {
            guard i + count <= b.count else { return nil }
            var value: Int64 = 0
            for _ in 0..<count {
                guard (48...57).contains(b[i]) else { return nil }
                value = value * 10 + Int64(b[i] - 48)
                i += 1
            }
            return value
        }
        func expect(_ chars: String) -> Bool {
            guard i < b.count, chars.utf8.contains(b[i]) else { return false }
            i += 1
            return true
        }
        guard let year = number(4), expect("-"), let month = number(2), expect("-"), let day = number(2),
              expect("Tt"), let hour = number(2), expect(":"), let minute = number(2), expect(":"),
              let second = number(2) else { return nil }
        guard (1...12).contains(month), day >= 1, day <= daysIn(month: month, year: year),
              hour < 24, minute < 60, second < 60 else { return nil }
        var micros: Int64 = 0
        if i < b.count, b[i] == UInt8(ascii: ".") {
            i += 1
            var digits = 0
            while i < b.count, (48...57).contains(b[i]) {
                if digits < 6 { micros = micros * 10 + Int64(b[i] - 48) }
                digits += 1
                i += 1
            }
            guard digits > 0 else { return nil }
            for _ in digits..<max(digits, 6) { micros *= 10 }
        }
        var offset: Int64 = 0
        if expect("Zz") {
        } else if i < b.count, b[i] == UInt8(ascii: "+") || b[i] == UInt8(ascii: "-") {
            let sign: Int64 = b[i] == UInt8(ascii: "-") ? -1 : 1
            i += 1
            guard let oh = number(2), expect(":"), let om = number(2), oh < 24, om < 60 else { return nil }
            offset = sign * (oh * 3600 + om * 60)
        } else {
            return nil
        }
        guard i == b.count else { return nil }
        let seconds = days(fromCivil: year, month, day) * 86_400 + hour * 3600 + minute * 60 + second - offset
        let date = Date(timeIntervalSince1970: Double(seconds * 1_000_000 + micros) / 1_000_000)
        // What is accepted must print, and what prints must parse back: a time that (after its
        // offset, and the rounding of a Date near the year 10000) lies outside years 0 to 9999 is not taken.
        guard isPrintable(date) else { return nil }
        return date
    }

    /// The earliest and latest times a store keeps: `0000-01-01T00:00:00Z`
    /// and `9999-12-31T23:59:59Z` (the latest whole second: a `Date` that
    /// near the year 10000 keeps about 30 µs, so a later fraction may round
    /// up into it). Microseconds since 1970.
    public static let earliestMicroseconds: Int64 = days(fromCivil: 0, 1, 1) * 86_400_000_000
    public static let latestMicroseconds: Int64 = (days(fromCivil: 10_000, 1, 1) * 86_400 - 1) * 1_000_000

    /// The range of times that print in four-digit years, as a message says it.
    public static let range = "0000-01-01T00:00:00Z to 9999-12-31T23:59:59.999999Z"

    /// Whether `date` prints as a time of years 0 to 9999 (``string(from:)``), which parses back.
    public static func isPrintable(_ date: Date) -> Bool {
        let printed = (date.timeIntervalSince1970 * 1_000_000).rounded()
        return printed >= Double(earliestMicroseconds) && printed < Double(latestMicroseconds + 1_000_000)
    }

    /// ``string(from:)`` for years 0–9999 (every time a store writes),
    /// digit by digit into one buffer: a page of search results formats
    /// two times an item, and the concatenation of padded pieces cost a
    /// tenth of writing the page's JSON.
    private static func formatted(year: Int64, month: Int64, day: Int64, secondOfDay: Int64, fraction: Int64) -> String {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 28) { buffer in
            var count = 0
            func digits(_ value: Int64, _ width: Int) {
                var value = value
                for position in stride(from: count + width - 1, through: count, by: -1) {
                    buffer[position] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: value % 10)
                    value /= 10
                }
                count += width
            }
            func byte(_ character: Unicode.Scalar) {
                buffer[count] = UInt8(ascii: character)
                count += 1
            }
            digits(year, 4); byte("-"); digits(month, 2); byte("-"); digits(day, 2); byte("T")
            digits(secondOfDay / 3600, 2); byte(":"); digits(secondOfDay / 60 % 60, 2); byte(":"); digits(secondOfDay % 60, 2)
            if fraction != 0 {
                byte(".")
                digits(fraction, 6)
                while buffer[count - 1] == UInt8(ascii: "0") { count -= 1 }
            }
            byte("Z")
            return String(decoding: UnsafeBufferPointer(rebasing: buffer[..<count]), as: UTF8.self)
        }
    }

    private static func pad(_ value: Int64, _ width: Int) -> String {
        let digits = String(value)
        return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
    }

    public static func isLeap(_ year: Int64) -> Bool { (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 }

    public static func daysIn(month: Int64, year: Int64) -> Int64 {
        switch month {
        case 2: isLeap(year) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    // Howard Hinnant's days-from-civil algorithms (proleptic Gregorian).
    public static func days(fromCivil year: Int64, _ month: Int64, _ day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    public static func civil(fromDays z0: Int64) -> (Int64, Int64, Int64) {
        let z = z0 + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}
