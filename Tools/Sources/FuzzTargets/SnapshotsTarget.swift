import ActivityDomain
import Crypto
import EventLog
import Foundation

/// A damaged or forged snapshot file: the input (after a first byte that
/// picks the repair: `0` none, `1` the trailing SHA-256 recomputed, so that
/// inputs reach past the digest) replaces the snapshot of a small store,
/// which `eventlog snapshot list` then lists and `eventlog replay --verify`
/// loads.
///
/// Promises: listing and rebuilding never throw because of a snapshot (a
/// damaged one is skipped, SPEC §2: "never half-used"); a snapshot that is
/// skipped or unchanged leaves the rebuilt views equal to the live ones.
/// The rebuild (a scratch environment each time: the slow part) runs only
/// for a file that passes the digest check and is stamped for these views;
/// any other is skipped by loading's first step, which runs every time.
enum SnapshotsTarget {
    struct Store: Sendable {
        let store: ActivityStore
        let path: String
        let original: [UInt8]
        let head: Position
        /// The link the original snapshot records (the log's at its position).
        let link: [UInt8]
    }

    static let fixture = Fixture { () throws -> Store in
        let store = try ActivityStore(path: Scratch.path("snapshots"), options: FuzzStores.fast).filled(with: FuzzStores.searchableLines)
        let info = try store.eventStore.createSnapshot()
        // Events after the snapshot, so a rebuild applies the log past it too.
        try store.write([try OperationDecoder().decode(#"{"op":"resignCurrent","activity":"a1","at":"2026-11-03T00:00:00Z"}"#)])
        return Store(store: store, path: info.path, original: Array(try Data(contentsOf: URL(fileURLWithPath: info.path))),
                     head: try store.head(), link: info.link?.bytes ?? [])
    }

    /// The seed input: the original snapshot.
    static func seeds() throws -> [[UInt8]] { [[0] + (try fixture.get().original)] }

    static func run(_ input: [UInt8]) throws {
        let fixture = try fixture.get()
        guard let mode = input.first else { return }
        var file = Array(input.dropFirst())
        // An input of the first snapshot format (no link: never used as it
        // is) reaches loading as it did when it was found: the link of the
        // fixture's snapshot is put after its position, and a digest that
        // held is recomputed.
        let unlinked = Array("ELSNAP01".utf8)
        if file.count >= 48, Array(file[0..<8]) == unlinked {
            let sealed = Array(SHA256.hash(data: Array(file[..<(file.count - 32)]))) == Array(file[(file.count - 32)...])
            file = Array("ELSNAP02".utf8) + file[8..<16] + fixture.link + file[16...]
            if sealed { file.replaceSubrange((file.count - 32)..., with: Array(SHA256.hash(data: Array(file[..<(file.count - 32)])))) }
        }
        if mode % 2 == 1, file.count >= 32 {
            file.replaceSubrange((file.count - 32)..., with: Array(SHA256.hash(data: Array(file[..<(file.count - 32)]))))
        }
        try Data(file).write(to: URL(fileURLWithPath: fixture.path))
        let events = fixture.store.eventStore
        var candidate = false
        do {
            let stamps = Set(events.views.all.map { "\($0.name) \($0.version)" })
            for snapshot in try events.snapshots() {
                // Loading starts with this check; a file that fails it is
                // never loaded, and rebuilding without it is the log's path.
                candidate = events.verifySnapshot(snapshot) && snapshot.position <= fixture.head
                    && Set(snapshot.projections.map { "\($0.name) \($0.version)" }) == stamps
            }
        } catch {
            throw FuzzFailure("listing snapshots threw \(type(of: error)): \(error)")
        }
        guard candidate else { return }
        let comparison: ViewComparison
        do {
            comparison = try events.verifyViews()
        } catch {
            throw FuzzFailure("replay --verify threw \(type(of: error)) because of a snapshot: \(error)")
        }
        if let difference = comparison.difference, comparison.report.snapshot == nil || file == fixture.original {
            throw FuzzFailure("the views rebuilt \(comparison.report.snapshot == nil ? "without the snapshot" : "from the original snapshot") differ: \(difference)")
        }
    }
}
