/// A name (a user, an identifier, a key, a device, an index, a path) that
/// is equal, hashed and ordered as its exact UTF-8 bytes.
///
/// Swift's `String` compares by canonical equivalence: `"jos\u{e9}"` and
/// `"jose\u{301}"` are one key of a `Set<String>` or a `Dictionary`. The
/// store keeps names as bytes (LMDB keys), so two names that differ in one
/// byte are two names (SPEC §2, "Names compare by bytes"); every set and
/// dictionary keyed by a name uses this type, and its order is LMDB's
/// (``KeyOrder``).
///
/// ```swift
/// let ids: Set<Name> = [Name("caf\u{e9}"), Name("cafe\u{301}")]
/// ids.count                       // 2 (a Set<String> would hold 1)
/// ids.sorted().map(\.string)      // by UTF-8 bytes
/// ```
public struct Name: Hashable, Comparable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    public let string: String

    public init(_ string: String) { self.string = string }

    public init(stringLiteral value: String) { self.string = value }

    public var description: String { string }

    public static func == (lhs: Name, rhs: Name) -> Bool { Name.equal(lhs.string, rhs.string) }

    public static func < (lhs: Name, rhs: Name) -> Bool { KeyOrder.precedes(lhs.string, rhs.string) }

    public func hash(into hasher: inout Hasher) {
        var copy = string
        copy.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
    }

    /// Whether `a` and `b` are the same bytes (never canonical equivalence).
    @inlinable
    public static func equal(_ a: String, _ b: String) -> Bool {
        if let same = a.utf8.withContiguousStorageIfAvailable({ x in
            b.utf8.withContiguousStorageIfAvailable { y in
                x.count == y.count && KeyOrder.compare(UnsafeRawBufferPointer(x), UnsafeRawBufferPointer(y)) == 0
            }
        }), let same { return same }
        return a.utf8.elementsEqual(b.utf8)
    }
}
