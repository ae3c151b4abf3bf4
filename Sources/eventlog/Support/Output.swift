import ActivityDomain
import Foundation
import TextIndex

/// Writing to stdout and stderr. JSON goes out compact with sorted keys
/// (`JSONValue.serialized()`), arrays one element a line, so that two stores
/// compare with `diff` and a program parses them with any JSON parser.
enum Output {
    static func line(_ text: String) {
        print(text)
    }

    /// One JSON value on one line (JSON Lines, summaries).
    static func json(_ value: JSONValue) {
        print(value.serialized())
    }

    /// A JSON array, one element a line.
    static func jsonArray(_ values: [JSONValue]) {
        guard !values.isEmpty else { print("[]"); return }
        print("[")
        for (index, value) in values.enumerated() {
            print(value.serialized() + (index + 1 < values.count ? "," : ""))
        }
        print("]")
    }

    /// A message on stderr, unbuffered, so it interleaves sensibly with stdout.
    static func error(_ text: String) {
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }

    /// A table for people: columns padded to their widest cell, by display
    /// width (``DisplayWidth``), so that Hindi, Chinese, Japanese and emoji
    /// cells line up with Latin ones.
    static func table(_ header: [String], _ rows: [[String]]) {
        print(tableLines(header, rows).joined(separator: "\n"))
    }

    /// The lines of ``table(_:_:)``.
    static func tableLines(_ header: [String], _ rows: [[String]]) -> [String] {
        let all = [header] + rows
        var widths = [Int](repeating: 0, count: header.count)
        for row in all { for (i, cell) in row.enumerated() { widths[i] = max(widths[i], DisplayWidth.of(cell)) } }
        return all.map { row in
            row.enumerated().map { i, cell in i == row.count - 1 ? cell : DisplayWidth.padded(cell, to: widths[i]) }
                .joined(separator: "  ")
        }
    }

    static func time(_ date: Date) -> String { ISO8601Time.string(from: date) }
}

/// Parses a `--now` or similar time argument.
func parseTime(_ text: String?, option: String) throws -> Date {
    guard let text else { return Date() }
    guard let date = ISO8601Time.date(from: text) else {
        throw CLIError("\(option): \"\(text)\" is not an ISO-8601 time; allowed: from \(ISO8601Time.range), e.g. 2026-11-22T10:00:00Z")
    }
    return date
}
