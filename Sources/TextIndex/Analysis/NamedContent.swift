import LMDB

/// What a document stored by reference holds under one name: its text
/// field, else its attribute, else nothing. What a query reads of a
/// candidate, so that a caller can answer it without building the whole
/// ``TextIndex/Content`` (``TextIndex/namedContentReader``).
///
/// ```swift
/// let content: TextIndex.Content = (["title": ["Oat latte"]], ["rating": .number(4)])
/// NamedContent("title", in: content)        // .field(["Oat latte"])
/// NamedContent("rating", in: content)       // .attribute(.numbers([4]))
/// NamedContent("comment", in: content)      // .absent
/// ```
public enum NamedContent: Sendable, Equatable {
    case field([String])
    case attribute(AttributeValue)
    case absent

    /// What `content` holds under `name`: the definition a
    /// ``TextIndex/namedContentReader`` must give exactly.
    public init(_ name: String, in content: TextIndex.Content) {
        if let values = content.fields[name] {
            self = .field(values)
        } else if let value = content.attributes[name] {
            self = .attribute(value)
        } else {
            self = .absent
        }
    }
}

extension TextIndex {
    /// Reads what a document stored by reference holds under one name.
    public typealias NamedContentSource = (_ reference: UnsafeRawBufferPointer, _ name: String) throws -> NamedContent

    /// ``namedContentReader`` bound to `txn`; without one, ``contentReader``
    /// whole, then the name looked up. Nil when neither is set.
    func namedContentSource(in txn: ReadTransaction) -> NamedContentSource? {
        if let namedContentReader {
            return { reference, name in try namedContentReader(reference, name, txn) }
        }
        guard let content = contentSource(in: txn) else { return nil }
        return { reference, name in NamedContent(name, in: try content(reference)) }
    }
}
