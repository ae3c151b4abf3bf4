import EventLog
import Foundation
import LMDB

/// The reads of one user space's views, written once for the two places
/// they run: on a space handle, each in a read transaction of its own
/// (``UserScoped``: `alice.savedActivities()`), and inside a read, where
/// they all see the same commit (``SpaceReader``:
/// `alice.read { space in try space.savedActivities() }`). Searches are
/// apart (``SpaceReader/search(_:now:limit:)``), as they read the keyword
/// index too.
///
/// ```swift
/// let saved = try alice.savedActivities()                            // one read
/// let (current, saved) = try await alice.read { space in             // one read, async
///     (try space.currentActivities(), try space.savedActivities())
/// }
/// ```
public protocol SpaceQueries {
    /// Runs `body` with a reader of the space's views: inside a read, that
    /// read's own reader; on a space handle, one of a read transaction of
    /// the log begun for it (no index: searches go through
    /// ``UserScoped/read(after:timeout:_:)-(_,_,((SpaceReader)throws->R))``).
    func withReader<R>(_ body: (SpaceReader) throws -> R) throws -> R
}

extension SpaceQueries {
    // MARK: Activities

    /// The activity with this id, in any state.
    public func activity(_ id: String) throws -> ActivityRecord? {
        try withReader { reader in
            try ActivityRules.checkIdentifier(id, field: "activity", operation: "activity")
            return try reader.inSpace(nil) { try reader.views.registry.record(id, space: $0, in: reader.txn) }
        }
    }

    /// Every activity of the space, by id.
    public func activities() throws -> [ActivityRecord] {
        try withReader { reader in try reader.inSpace([]) { try reader.views.registry.allRecords(space: $0, in: reader.txn) } }
    }

    /// The activity current on the space's `device`, or nil.
    public func currentActivity(onDevice device: String) throws -> CurrentActivity? {
        try withReader { reader in
            try ActivityRules.checkIdentifier(device, field: "device", operation: "currentActivity")
            return try reader.inSpace(nil) {
                try reader.views.current.activity(onDevice: device, space: $0, registry: reader.views.registry, in: reader.txn)
            }
        }
    }

    /// Every current activity of the space, by device.
    public func currentActivities() throws -> [CurrentActivity] {
        try withReader { reader in
            try reader.inSpace([]) { try reader.views.current.all(space: $0, registry: reader.views.registry, in: reader.txn) }
        }
    }

    /// What Handoff offers this space's user on `device` at `now`: the
    /// activities current on the user's other devices that are eligible for
    /// handoff, not expired at `now`, and whose encoded `userInfo` fits
    /// ``ActivityStoreOptions/handoffUserInfoLimit``; the most recently made
    /// current first. It walks the user's own devices only (one key range).
    public func handoffCandidates(device: String, now: Date) throws -> [CurrentActivity] {
        try withReader { reader in
            try ActivityRules.checkIdentifier(device, field: "device", operation: "handoff")
            let limit = reader.store.options.handoffUserInfoLimit
            return try reader.currentActivities()
                .filter { current in
                    !Name.equal(current.device, device) && current.activity.eligibleForHandoff
                        && !current.activity.isExpired(at: now) && ActivityStore.encodedUserInfoSize(current.activity.userInfo) <= limit
                }
                .sorted { ($0.becameCurrentAt, $0.position) > ($1.becameCurrentAt, $1.position) }
        }
    }

    // MARK: Saved activities

    /// Every saved copy of the space, by key.
    public func savedActivities() throws -> [SavedActivity] {
        try withReader { reader in try reader.inSpace([]) { try reader.views.saved.all(space: $0, in: reader.txn) } }
    }

    /// The copy saved under `key` (a persistentIdentifier, or an activity id).
    public func savedActivity(forKey key: String) throws -> SavedActivity? {
        try withReader { reader in
            try ActivityRules.checkIdentifier(key, field: "key", operation: "savedActivity")
            return try reader.inSpace(nil) { try reader.views.saved.activity(forKey: key, space: $0, in: reader.txn) }
        }
    }

    /// The saved copies with this targetContentIdentifier, most recently saved first.
    public func savedActivities(withTargetContentIdentifier identifier: String) throws -> [SavedActivity] {
        try withReader { reader in
            try reader.inSpace([]) { try reader.views.saved.activities(withTargetContentIdentifier: identifier, space: $0, in: reader.txn) }
        }
    }

    /// The saved copies with this webpageURL, most recently saved first.
    public func savedActivities(withWebpageURL url: URL) throws -> [SavedActivity] {
        try withReader { reader in
            try reader.inSpace([]) { try reader.views.saved.activities(withWebpageURL: url.absoluteString, space: $0, in: reader.txn) }
        }
    }

    /// Resolves a persistentIdentifier (or saved key), targetContentIdentifier
    /// or webpageURL of this space: the saved activity, or when it is gone,
    /// the position and operation that removed it, so that a link never
    /// fails silently.
    public func resolve(_ identifier: String) throws -> SavedActivityResolution {
        try withReader { reader in try reader.inSpace(.unknown) { try reader.views.saved.resolve(identifier, space: $0, in: reader.txn) } }
    }

    /// Siri's "suggest returning to this screen": the space's saved copies
    /// that are eligible for prediction and not expired at `now`, most often
    /// and most recently made current first (``Suggestion/score``), then by
    /// key; at most `limit`.
    public func suggestions(now: Date, limit: Int = 10) throws -> [Suggestion] {
        try withReader { reader in
            let records = try reader.inSpace([]) { try reader.views.saved.allRecords(space: $0, in: reader.txn) }
            let nowMicros = now.eventMicroseconds
            let ranked = try records
                .filter { $0.copy.eligibleForPrediction && !($0.copy.hasExpirationDateMicros && $0.copy.expirationDateMicros <= nowMicros) }
                .map { try Suggestion(record: $0, nowMicros: nowMicros) }
                .sorted { $0.score != $1.score ? $0.score > $1.score : utf8Less($0.key, $1.key) }
            return Array(ranked.prefix(max(0, limit)))
        }
    }

    // MARK: Items

    /// The client state the last committed batch of `index` stored, or nil.
    public func fetchLastClientState(index: String) throws -> Data? {
        try withReader { reader in
            try ActivityRules.checkIdentifier(index, field: "index", operation: "fetchLastClientState")
            return try reader.inSpace(nil) { try reader.views.items.clientState(ofIndex: index, space: $0, in: reader.txn) }
        }
    }

    /// Every stored client state, by index name.
    public func clientStates() throws -> [IndexClientState] {
        try withReader { reader in try reader.inSpace([]) { try reader.views.items.allClientStates(space: $0, in: reader.txn) } }
    }

    /// The item with this identifier, or nil.
    public func item(_ uniqueIdentifier: String) throws -> IndexedItem? {
        try withReader { reader in
            try ActivityRules.checkIdentifier(uniqueIdentifier, field: "uniqueIdentifier", operation: "item")
            return try reader.inSpace(nil) { try reader.views.items.item(uniqueIdentifier, space: $0, in: reader.txn) }
        }
    }

    /// The items with these identifiers that exist, in the order asked (an
    /// identifier asked twice gives its item twice), from one read
    /// transaction; unknown identifiers are left out.
    public func items(withIdentifiers identifiers: [String]) throws -> [IndexedItem] {
        try withReader { reader in
            for identifier in identifiers {
                try ActivityRules.checkIdentifier(identifier, field: "uniqueIdentifier", operation: "items")
            }
            return try reader.inSpace([]) { space in
                try reader.views.items.items(identifiers, space: space, in: reader.txn).compactMap { $0 }
            }
        }
    }

    /// Every item, by identifier (expired ones too, until purged).
    public func items() throws -> [IndexedItem] {
        try withReader { reader in try reader.inSpace([]) { try reader.views.items.all(space: $0, in: reader.txn) } }
    }

    /// The items in `domain` and every domain below it, by identifier.
    public func items(inDomain domain: String) throws -> [IndexedItem] {
        try withReader { reader in
            try SpotlightRules.checkDomainIdentifier(domain, operation: "items", field: "domain")
            return try reader.inSpace([]) { try reader.views.items.items(inDomain: domain, space: $0, in: reader.txn) }
        }
    }
}
