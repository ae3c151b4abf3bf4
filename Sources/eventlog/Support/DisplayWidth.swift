import CICU

/// How many terminal columns text takes, for tables that line up in every
/// script: one a grapheme cluster (a Hindi syllable with its vowel signs,
/// a letter with its accents), two for a cluster that starts with an East
/// Asian Wide or Fullwidth character (Chinese, Japanese, Korean; ICU's
/// East_Asian_Width) or that shows as an emoji.
///
/// ```swift
/// DisplayWidth.of("latte")   // 5
/// DisplayWidth.of("कॉफी")     // 2: two syllables
/// DisplayWidth.of("拿铁")     // 4
/// DisplayWidth.of("☕️ latte") // 8
/// ```
enum DisplayWidth {
    static func of(_ text: String) -> Int {
        var width = 0
        for cluster in text {
            width += columns(cluster)
        }
        return width
    }

    static func columns(_ cluster: Character) -> Int {
        if cluster.isASCII { return 1 }
        let scalars = cluster.unicodeScalars
        guard let first = scalars.first else { return 0 }
        if cicu_is_wide(first.value) != 0 { return 2 }
        // Emoji shown as emoji: those that are by default, and those a
        // variation selector 16 (U+FE0F) or a modifier turns into one.
        if first.properties.isEmojiPresentation { return 2 }
        if first.properties.isEmoji && scalars.contains(where: { $0.value == 0xFE0F || $0.properties.isEmojiModifier }) { return 2 }
        return 1
    }

    /// `text` followed by spaces up to `width` columns.
    static func padded(_ text: String, to width: Int) -> String {
        text + String(repeating: " ", count: max(0, width - of(text)))
    }
}
