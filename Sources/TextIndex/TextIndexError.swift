/// What the text index rejects or finds broken.
///
/// ```swift
/// do { try writer.upsert(doc) }
/// catch TextIndexError.identifierTooLong(let id, let bytes) { … }
/// ```
public enum TextIndexError: Error, Equatable, Sendable, CustomStringConvertible {
    /// An identifier that is empty.
    case emptyIdentifier(kind: String)
    /// An identifier over ``TextIndex/maximumIdentifierLength`` UTF-8 bytes.
    case identifierTooLong(String, bytes: Int)
    /// A kind that is empty, longer than 64 bytes, or contains NUL.
    case invalidKind(String)
    /// A field or attribute name that is empty, longer than 64 bytes,
    /// contains NUL, or is `kind` or `expirationDate`.
    case invalidName(String)
    /// The same name given both as a text field and as an attribute.
    case duplicateName(String)
    /// Stored bytes that do not decode.
    case corrupt(String)
    /// The space's terms were made by another tokenizer (``Tokenizer/identity``:
    /// another ICU version, or other rules) than this process's: a replaced
    /// or removed document's terms, found by tokenizing its stored text
    /// again, could differ from those in its postings. Rebuild the index.
    case tokenizerChanged(stored: String, current: String)
    /// A ``IndexDocument/contentReference`` that is empty or over 64 bytes.
    case invalidContentReference(bytes: Int)
    /// A document stored by reference read where no ``TextIndex/ContentSource``
    /// was given to read its content.
    case noContentSource(identifier: String)

    public var description: String {
        switch self {
        case .emptyIdentifier(let kind): "the identifier of a \(kind) document is empty"
        case .identifierTooLong(let id, let n):
            "the identifier \(id.prefix(40))… is \(n) UTF-8 bytes; at most \(TextIndex.maximumIdentifierLength) are allowed"
        case .invalidKind(let kind): "the kind \(kind.debugDescription) is invalid: 1 to 64 UTF-8 bytes, no NUL"
        case .invalidName(let name):
            "the name \(name.debugDescription) is invalid: 1 to 64 UTF-8 bytes, no NUL, not kind or expirationDate"
        case .duplicateName(let name): "\(name) is given both as a text field and as an attribute"
        case .corrupt(let what): "the text index is corrupt: \(what)"
        case .tokenizerChanged(let stored, let current):
            "the text index was built with \(stored) and this process tokenizes with \(current): rebuild the index (eventlog replay)"
        case .invalidContentReference(let n): "a document's content reference is \(n) bytes; 1 to 64 are allowed"
        case .noContentSource(let id): "the document \(id.prefix(40)) keeps its content elsewhere, and no content source was given to read it"
        }
    }
}
