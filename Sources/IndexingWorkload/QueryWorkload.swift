import Foundation
import TestSupport

/// Queries for the indexing benchmarks: read from a file (one a line, as
/// `shared/corpus/queries.txt`), or made from ``ItemGenerator``'s words in
/// the same four kinds that file cycles through, so that generated stores
/// have queries that find something.
///
/// ```swift
/// let queries = QueryWorkload.freeText(count: 400)   // ["the", "data library", "fil*", "imagenes", …]
/// let latency = try IndexingRun.measure(queries, on: store)
/// ```
public enum QueryWorkload {
    /// The non-empty lines of `path`, trimmed.
    public static func read(path: String) throws -> [String] {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            throw WorkloadError("queries \(path) cannot be read as UTF-8 text")
        }
        return text.split(whereSeparator: \.isNewline)
            .map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty }
    }

    /// One word, two words (both must match), a three-letter prefix, a
    /// Spanish word with its accents stripped: in turn, from a seeded draw.
    public static func freeText(count: Int, seed: UInt64 = 7) -> [String] {
        var rng = SeededGenerator(seed: seed)
        func word() -> String {
            // Skip the stop-word head of the list: real queries name things.
            let pool = Vocabulary.english.dropFirst(20)
            return pool[pool.startIndex + Int(rng.next() % UInt64(pool.count))]
        }
        let accented = Vocabulary.spanish.filter { $0.unicodeScalars.contains { $0.value > 0x7F } }
        return (0..<count).map { index in
            switch index % 4 {
            case 0: return word()
            case 1: return word() + " " + word()
            case 2:
                let prefixable = word()
                return String(prefixable.prefix(3)) + "*"
            default:
                let spanish = accented[Int(rng.next() % UInt64(accented.count))]
                return spanish.folding(options: .diacriticInsensitive, locale: nil)
            }
        }
    }

    /// Expressions of the query language over ``ItemGenerator``'s fields,
    /// selective as an app's lookups are (1 to about 130 results in 20,000
    /// items): an identifier, a title prefix, words in a text field with a
    /// domain, a diacritic-insensitive word, a keyword with a domain.
    /// (`query` returns every match: an expression matching thousands costs
    /// in proportion, and would measure result size instead of lookup.)
    public static let structured: [String] = [
        #"uniqueIdentifier == "gen:1234""#,
        #"title == "lib*"cd"#,
        #"title == "editor-*"c"#,
        #"displayName == "network client"cdt && domainIdentifier == "net""#,
        #"displayName == "búsqueda"cdw"#,
        #"keywords == "game::strategy" && domainIdentifier == "games""#,
        #"domainIdentifier == "contrib.games" && displayName == "protocol"cdw"#,
    ]
}
