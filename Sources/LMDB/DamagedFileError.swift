/// An LMDB data file that cannot be used safely: cut short, not an LMDB
/// file, or with a page whose structure is damaged. Thrown when an
/// ``Environment`` opens (``Environment/checkPages()``), before LMDB reads
/// any page that could make it fault, loop or assert.
///
/// ```swift
/// do { _ = try Environment(path: dir) }
/// catch let error as DamagedFileError {
///     print(error)   // store file cut short: /srv/events/data.mdb is 131072 bytes; its meta page records 65 pages …
/// }
/// ```
public struct DamagedFileError: Error, CustomStringConvertible, Sendable {
    public enum Problem: Sendable, Equatable {
        /// The file ends before a page that the environment uses.
        /// `recordedSize` is what the newest meta page records (its last
        /// page, plus one, times the page size); nil when the file ends
        /// before that meta page.
        case cutShort(fileSize: Int, recordedSize: Int?, page: Int?)
        /// No LMDB meta page where one must be (a foreign or overwritten file).
        case notAnLMDBFile(String)
        /// A page whose header, nodes or links break LMDB's format.
        case damagedPage(page: Int, detail: String)
        /// Two keys of a database out of their order (LMDB's `memcmp` order):
        /// `key` follows `previous` where it must sort after it.
        /// `preceding` is the key before `previous`, when there is one: what
        /// tells which of the two is out of place.
        case keysOutOfOrder(page: Int, previous: [UInt8], key: [UInt8], preceding: [UInt8]?)
    }

    /// The data file, e.g. `/srv/events/data.mdb`.
    public var file: String
    public var problem: Problem
    /// The named database the damaged page belongs to (`"log"`), `"main"`
    /// for LMDB's main database (the catalog of named ones), `"free"` for
    /// its free-page list; nil when the damage is not in one page.
    public var database: String?

    public init(file: String, problem: Problem, database: String? = nil) {
        self.file = file
        self.problem = problem
        self.database = database
    }

    public var description: String {
        switch problem {
        case .notAnLMDBFile: summary
        default: summary + ". Restore the file from a copy (a follower, `eventlog restore`)" + (isEmptyFile ? Self.emptyFileHint : "")
        }
    }

    /// What is wrong, without how to recover: a file that can be rebuilt
    /// (a store's index, derived from its log) says its own remedy.
    public var summary: String {
        let db = database.map { " of database \"\($0)\"" } ?? ""
        switch problem {
        case .cutShort(let fileSize, let recordedSize, let page):
            let which = page.map { "; page \($0)\(db), which is in use, lies past the end" } ?? ""
            let recorded = recordedSize.map { "its meta page records \($0) bytes" } ?? "it ends inside its meta pages"
            return "store file cut short: \(file) is \(fileSize) bytes; \(recorded)\(which)"
        case .notAnLMDBFile(let detail):
            return "\(file) is not an LMDB data file: \(detail)"
        case .damagedPage(let page, let detail):
            return "store file damaged: \(file), page \(page)\(db): \(detail)"
        case .keysOutOfOrder(let page, let previous, let key, _):
            return "store file damaged: \(file), page \(page)\(db): key \(Self.hex(key)) follows \(Self.hex(previous)), out of order"
        }
    }

    private var isEmptyFile: Bool {
        if case .cutShort(0, _, _) = problem { return true }
        return false
    }

    private static let emptyFileHint = " (if no store was ever written here, remove the empty file to start one)"

    static func hex(_ bytes: [UInt8]) -> String {
        let shown = bytes.prefix(32).map { byte in
            let digits = String(byte, radix: 16)
            return byte < 16 ? "0" + digits : digits
        }.joined()
        return "0x" + shown + (bytes.count > 32 ? "… (\(bytes.count) bytes)" : "")
    }
}
