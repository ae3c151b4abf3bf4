import Foundation

/// The fuzz targets: each takes arbitrary bytes and feeds them to one of the
/// product's input surfaces through its public API, as a user's data would
/// reach it. Two drivers call them: `eventlog-fuzz`, built with
/// `-sanitize=fuzzer` by `Scripts/fuzz.sh` (libFuzzer generates inputs), and
/// the test suite, which replays the committed corpora in `Fuzz/Corpus/`
/// without a sanitizer build.
///
/// ```swift
/// try FuzzTarget.query.run(Array(#"title == "latte*"cd"#.utf8))
/// ```
///
/// An input fails in one of two ways: it crashes the process (a trap, a
/// sanitizer report), or ``run(_:)`` throws ``FuzzFailure`` because the
/// product broke a promise (an error of a kind its callers do not handle,
/// a damaged record that verifies). Any other outcome, errors included,
/// passes.
public enum FuzzTarget: String, CaseIterable, Sendable {
    /// A JSON Lines file for `eventlog apply`: ``OperationDecoder``.
    case operations
    /// A query-language expression and a free-text search, evaluated on a small store.
    case query
    /// A log record's bytes, stored over the last record of a small store, then read and verified.
    case records
    /// A snapshot file's bytes, loaded by `replay --verify`.
    case snapshots
    /// An event's payload under each event type, decoded and applied by the projections.
    case payloads
    /// `eventlog`'s arguments as bytes, run as a child process on a small store.
    case arguments

    /// Runs one input.
    public func run(_ input: [UInt8]) throws {
        switch self {
        case .operations: try OperationsTarget.run(input)
        case .query: try QueryTarget.run(input)
        case .records: try RecordsTarget.run(input)
        case .snapshots: try SnapshotsTarget.run(input)
        case .payloads: try PayloadsTarget.run(input)
        case .arguments: try ArgumentsTarget.run(input)
        }
    }
}

/// A promise the product broke on some input.
public struct FuzzFailure: Error, CustomStringConvertible {
    public var description: String
    init(_ description: String) { self.description = description }
}

/// One directory for the fixture stores of this process (in `/dev/shm`
/// when there is one: the targets write on every input), removed at exit.
enum Scratch {
    static let directory: String = {
        let base = FileManager.default.isWritableFile(atPath: "/dev/shm") ? "/dev/shm" : NSTemporaryDirectory()
        let path = (base as NSString).appendingPathComponent("eventlog-fuzz-\(getpid())-\(UUID().uuidString.prefix(8))")
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        atexit { try? FileManager.default.removeItem(atPath: Scratch.directory) }
        return path
    }()

    static func path(_ name: String) -> String { (directory as NSString).appendingPathComponent(name) }
}

/// A fixture built once per process; a failure to build it is reported on
/// every input rather than trapping.
struct Fixture<Value: Sendable>: Sendable {
    let result: Result<Value, FixtureError>

    init(_ build: () throws -> Value) {
        do { result = .success(try build()) } catch { result = .failure(FixtureError(description: "\(error)")) }
    }

    func get() throws -> Value {
        switch result {
        case .success(let value): return value
        case .failure(let error): throw FuzzFailure("the fixture could not be built: \(error.description)")
        }
    }
}

struct FixtureError: Error, Sendable { var description: String }

extension FuzzTarget {
    /// Valid inputs to start a corpus from (`eventlog-fuzz seed`).
    public func seeds() throws -> [[UInt8]] {
        switch self {
        case .operations: return FuzzStores.searchableLines.map { Array($0.utf8) } + OperationsTarget.examples.map { Array($0.utf8) }
        case .query: return QueryTarget.examples.map { Array($0.utf8) }
        case .records: return try RecordsTarget.seeds()
        case .snapshots: return try SnapshotsTarget.seeds()
        case .payloads: return try PayloadsTarget.seeds()
        case .arguments: return ArgumentsTarget.seeds()
        }
    }
}
