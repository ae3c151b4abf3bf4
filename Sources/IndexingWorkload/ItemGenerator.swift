import ActivityDomain
import Foundation
import TestSupport

/// Realistic multilingual items when no corpus is given: the shape of
/// `shared/corpus` (86% English, 9% Japanese, 3% Spanish, 2% Chinese; title
/// about 15 characters, display name about 44, description median about 270
/// with a long tail; two keywords; package-section domains), from a seeded
/// generator, so the same seed gives the same items.
///
/// ```swift
/// var generator = ItemGenerator(seed: 1)
/// let items = generator.items(10_000)
/// ```
public struct ItemGenerator {
    private var rng: SeededGenerator
    private var counter = 0

    public init(seed: UInt64 = 1) { rng = SeededGenerator(seed: seed) }

    public mutating func items(_ count: Int) -> [SearchableItem] { (0..<count).map { _ in item() } }

    public mutating func item() -> SearchableItem {
        counter += 1
        let roll = rng.unit()
        let language: Language = roll < 0.86 ? .english : roll < 0.95 ? .japanese : roll < 0.98 ? .spanish : .chinese
        var item = SearchableItem(uniqueIdentifier: "gen:\(counter)\(language.suffix)",
                                  domainIdentifier: pick(Self.domains))
        item.attributeSet.title = pick(Vocabulary.english) + "-" + pick(Vocabulary.english) + "\(counter % 97)"
        item.attributeSet.displayName = sentence(language, characters: 44)
        // Log-normal lengths around a median of 270 characters, capped.
        let length = min(8000, Int(270 * exp(0.8 * rng.normal())))
        item.attributeSet.contentDescription = sentence(language, characters: max(20, length))
        item.attributeSet.keywords = (0..<Int(rng.next() % 4)).map { _ in pick(Self.keywords) }
        return item
    }

    enum Language {
        case english, japanese, spanish, chinese
        var suffix: String {
            switch self {
            case .english: ""
            case .japanese: "@ja"
            case .spanish: "@es"
            case .chinese: "@zh_CN"
            }
        }
    }

    private mutating func sentence(_ language: Language, characters: Int) -> String {
        let words: [String], separator: String
        switch language {
        case .english: (words, separator) = (Vocabulary.english, " ")
        case .spanish: (words, separator) = (Vocabulary.spanish, " ")
        case .japanese: (words, separator) = (Vocabulary.japanese, "")
        case .chinese: (words, separator) = (Vocabulary.chinese, "")
        }
        var text = ""
        while text.count < characters {
            if !text.isEmpty { text += separator }
            text += zipf(words)
        }
        return text
    }

    /// Earlier words far more often, as in real text.
    private mutating func zipf(_ words: [String]) -> String {
        let u = rng.unit()
        return words[min(words.count - 1, Int(Double(words.count) * u * u * u))]
    }

    private mutating func pick(_ list: [String]) -> String { list[Int(rng.next() % UInt64(list.count))] }

    static let domains = ["libs", "libdevel", "doc", "python", "devel", "perl", "utils", "net", "games", "admin",
                          "text", "graphics", "x11", "sound", "web", "science", "non-free.libs", "contrib.games"]
    static let keywords = ["game::strategy", "interface::graphical", "role::program", "implemented-in::c",
                           "devel::library", "use::editing", "works-with::text", "scope::utility", "uitoolkit::gtk",
                           "network::client", "protocol::http", "implemented-in::python", "role::shared-lib"]
}
