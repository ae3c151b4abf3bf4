import ActivityDomain
import Foundation

/// Items spread over `count` users, the shape of a service that serves many:
/// item i belongs to user `u{i mod count}` (three digits at least, as
/// `shared/tools/peer_bench.py --users N` names them: `u000`, `u001`, …),
/// indexed by an operation of its own in that user's space; query k runs as
/// user `u{k mod count}`.
///
/// ```swift
/// let spread = UserSpread(count: 300)
/// spread.user(301)                                   // "u001"
/// spread.commands(batch, first: 500)                 // 500 operations, users u200, u201, …
/// ```
public struct UserSpread: Sendable, Equatable {
    public let count: Int

    public init(count: Int) {
        precondition(count >= 1)
        self.count = count
    }

    /// The user of item (or query) `index`.
    public func user(_ index: Int) -> String {
        String(format: "u%03d", index % count)
    }

    /// One `indexSearchableItems` operation an item, each in its user's
    /// space; `first` is the index of `items[0]` in the whole source.
    public func commands(_ items: [SearchableItem], first: Int) -> [ActivityCommand.Timed] {
        items.enumerated().map { k, item in
            ActivityCommand.Timed(.indexSearchableItems([item]), user: user(first + k))
        }
    }
}
