import Foundation
import Testing

extension FaultWorkload {
    /// `eventlog forget`: a store of the default space, alice and bob, with a
    /// snapshot that holds alice's data; the forget redacts alice's events,
    /// appends the redaction record, drops her views and removes the
    /// snapshot. After a fault: the whole forget or none of it (the log is
    /// the starting one or the clean run's, checked by the sweep), and the
    /// views and snapshots agree with which.
    static let forget = FaultWorkload(name: "forget", prepare: { store, dir in
        try applyPrefix(store, dir)
        // alice's events on many pages: a commit of several writes.
        let more = (0..<150).map { i in
            #"{"op":"indexSearchableItems","user":"alice","items":[{"uniqueIdentifier":"more-\#(i)","attributeSet":{"title":"More \#(ForgetCommandTests.marker) \#(i)"}}],"at":"2026-11-22T10:05:\#(String(format: "%02d", i % 60)).\#(String(format: "%03d", i))Z"}"#
        }
        let users = try dir.file("users.jsonl", Array(ForgetCommandTests.mixed().dropFirst()) + more)
        let apply = try CLI.run(["apply", "--store", store, users])
        #expect(apply.status == 0, "\(apply.stderr)")
        let snapshot = try CLI.run(["snapshot", "create", "--store", store])
        #expect(snapshot.status == 0, "\(snapshot.stderr)")
    }, command: { store, _ in
        ["forget", "--store", store, "--user", "alice", "--at", "2026-11-22T12:00:00Z"]
    }, after: { store, _, label in
        let readable = try CLI.run(["log", "--store", store, "--user", "alice", "--json"]).stdout.split(separator: "\n").count
        let users = try CLI.run(["users", "--store", store, "--json"]).objects().compactMap { $0["user"] as? String }
        let snapshots = try CLI.run(["snapshot", "list", "--store", store, "--json"]).objects()
        let items = try CLI.run(["items", "--store", store, "--user", "alice", "--json"]).objects()
        if users.contains("alice") {
            // None of it: alice's events and views are all there (the snapshot may be gone: a cache).
            #expect(readable == 162 && items.count == 152, "\(label): alice has \(readable) readable events and \(items.count) items")
        } else {
            #expect(readable == 0 && items.isEmpty && snapshots.isEmpty,
                    "\(label): forgotten, but \(readable) events, \(items.count) items and \(snapshots.count) snapshots are left")
        }
        for snapshot in snapshots {
            #expect(snapshot["valid"] as? Bool == true, "\(label): a damaged snapshot is left: \(snapshot)")
        }
        // The forget can be made again, whole.
        let again = try CLI.run(["forget", "--store", store, "--user", "alice"])
        #expect(again.status == 0, "\(label): forget after the fault: \(again.stderr)")
        #expect(try CLI.run(["items", "--store", store, "--user", "alice", "--json"]).objects().isEmpty)
    }, rewritesLog: true)
}
