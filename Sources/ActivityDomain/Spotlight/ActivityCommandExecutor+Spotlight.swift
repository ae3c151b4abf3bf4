import EventLog
import Foundation
import LMDB

/// Core Spotlight's commands (SPEC §4): each is validated against the item
/// store (which already holds this transaction's earlier events), its
/// outcome decided (merges, default expirations, removed identifiers) and
/// appended as one event, so that projections only apply what the event says.
///
/// The index batches begun in this write are kept in ``openBatches``: an
/// `endIndexBatch` needs its `beginIndexBatch` earlier in the same write,
/// and ``finish()`` rejects a batch left open.
extension ActivityCommandExecutor {
    /// An index of one user space, by bytes.
    struct IndexBatchKey: Hashable {
        var user: Name
        var index: Name

        init(user: String, index: String) {
            self.user = Name(user)
            self.index = Name(index)
        }
    }

    private var items: SearchableItemStore { views.items }

    /// Throws when an index batch was begun and not ended: after the last command.
    func finish() throws {
        guard let (key, open) = openBatches.min(by: { $0.value.commandIndex < $1.value.commandIndex }) else { return }
        var error = ActivityError(.invalidIndexBatch, operation: "beginIndexBatch", field: "index", value: key.index.string,
                                  allowed: "an endIndexBatch of the same index later in the same batch of commands")
        error.commandIndex = open.commandIndex
        throw error
    }

    /// Appends `event` in the space of `user` (the command's when nil) at the command's time.
    private func append(_ event: SpotlightEvent, user: String? = nil, _ scope: inout CommandScope) throws {
        let recorded = try batch.append(event.newEvent(user: user ?? scope.user, at: scope.time))
        scope.result.eventTypes.append(recorded.type)
    }

    // MARK: Items

    /// What one identifier becomes within one `indexSearchableItems`.
    private struct Pending {
        var item: SearchableItem
        var defaultExpiration: Bool
        var existedBefore: Bool
        var replaced = false
        var setAttributes = Set<String>()
        var removedAttributes = Set<String>()
    }

    func index(_ given: [SearchableItem], _ scope: inout CommandScope) throws {
        let operation = "indexSearchableItems"
        let items = given.map(\.normalized)
        for item in items { try SpotlightRules.checkItem(item, operation: operation) }
        guard !items.isEmpty else { return }
        // By bytes: identifiers that differ in one byte are two items.
        var pending: [Name: Pending] = [:]
        var dropped = Set<Name>()
        for item in items {
            let id = Name(item.uniqueIdentifier)
            var state: Pending? = pending[id]
            if state == nil, let stored = try self.items.rawRecord(id.string, space: scope.space, in: txn) {
                state = Pending(item: SearchableItem(proto: stored.item), defaultExpiration: stored.item.defaultExpiration,
                                existedBefore: true)
            }
            if item.isUpdate {
                guard var merged = state else {
                    dropped.insert(id)
                    continue
                }
                merged.item.attributeSet = merged.item.attributeSet.merged(with: item.attributeSet, removing: item.attributesToRemove)
                if let domain = item.domainIdentifier { merged.item.domainIdentifier = domain }
                if let expiration = item.expirationDate {
                    merged.item.expirationDate = expiration
                    merged.defaultExpiration = false
                }
                let given = Set(item.attributeSet.setAttributeNames)
                merged.setAttributes.formUnion(given)
                merged.setAttributes.subtract(item.attributesToRemove)
                merged.removedAttributes.formUnion(item.attributesToRemove)
                merged.removedAttributes.subtract(given)
                pending[id] = merged
            } else {
                let (replacement, defaultExpiration) = item.replacement(at: scope.time)
                pending[id] = Pending(item: replacement, defaultExpiration: defaultExpiration,
                                      existedBefore: state?.existedBefore ?? false, replaced: true)
            }
        }
        var message = Activitylog_V1_SearchableItemsIndexed()
        for id in pending.keys.sorted() {
            let state = pending[id]!
            var indexed = Activitylog_V1_IndexedItem()
            indexed.item = state.item.recorded(defaultExpiration: state.defaultExpiration)
            indexed.outcome = !state.existedBefore ? .added : state.replaced ? .replaced : .merged
            if indexed.outcome == .merged {
                indexed.setAttributes = state.setAttributes.sorted(by: utf8Less)
                indexed.removedAttributes = state.removedAttributes.sorted(by: utf8Less)
            }
            message.items.append(indexed)
        }
        message.droppedUpdates = dropped.sorted().map(\.string)
        try append(.itemsIndexed(message), &scope)
        scope.result.droppedUpdates = message.droppedUpdates
    }

    func deleteItems(_ ids: [String], _ scope: inout CommandScope) throws {
        let operation = "deleteSearchableItems"
        for id in ids { try ActivityRules.checkIdentifier(id, field: "identifiers", operation: operation) }
        let requested = Set(ids.map { Name($0) }).sorted().map(\.string)
        guard !requested.isEmpty else { return }
        var message = Activitylog_V1_SearchableItemsDeleted()
        message.identifiers = requested
        let space = scope.space
        message.removedIdentifiers = try requested.filter { try items.contains($0, space: space, in: txn) }
        // Written even when nothing matched: the request is a fact an auditor wants.
        try append(.itemsDeleted(message), &scope)
        scope.result.removedItems = message.removedIdentifiers
    }

    func deleteItems(inDomains domains: [String], _ scope: inout CommandScope) throws {
        let operation = "deleteSearchableItemsInDomains"
        for domain in domains { try SpotlightRules.checkDomainIdentifier(domain, operation: operation, field: "domains") }
        let requested = Set(domains.map { Name($0) }).sorted().map(\.string)
        guard !requested.isEmpty else { return }
        var removed = Set<Name>()
        for domain in requested { removed.formUnion(try items.identifiers(inDomain: domain, space: scope.space, in: txn).map { Name($0) }) }
        var message = Activitylog_V1_SearchableItemsInDomainsDeleted()
        message.domainIdentifiers = requested
        message.removedIdentifiers = removed.sorted().map(\.string)
        try append(.domainsDeleted(message), &scope)
        scope.result.removedItems = message.removedIdentifiers
    }

    func deleteAllItems(_ scope: inout CommandScope) throws {
        var message = Activitylog_V1_SearchableItemsAllDeleted()
        message.removedIdentifiers = try items.allIdentifiers(space: scope.space, in: txn)
        message.forgottenClientStateIndexes = try items.allClientStates(space: scope.space, in: txn).map(\.index)
        try append(.allDeleted(message), &scope)
        scope.result.removedItems = message.removedIdentifiers
    }

    /// Removes what expired at `now`: in `onlyUser`'s space, or (nil) in
    /// every space, each space's removals as an event of that space, by user
    /// name (UTF-8 byte order).
    func purgeExpired(now: Date, onlyUser: String?, _ scope: inout CommandScope) throws {
        var expired = try items.expiredIdentifiers(at: now, in: txn)
        if onlyUser != nil {
            expired = expired.filter { $0.key == scope.space }
        }
        var byUser: [(user: String, identifiers: [String])] = []
        for (space, identifiers) in expired {
            guard let user = try views.spaces.user(ofID: space, in: txn) else {
                throw PayloadError("spotlight.itemsByExpiration names space \(space), which spaces.byID does not hold")
            }
            byUser.append((user, identifiers))
        }
        // Nothing expired, nothing to say: a periodic purge does not fill the log.
        for (user, identifiers) in byUser.sorted(by: { utf8Less($0.user, $1.user) }) {
            var message = Activitylog_V1_SearchableItemsExpiredPurged()
            message.nowMicros = now.eventMicroseconds
            message.removedIdentifiers = identifiers
            try append(.expiredPurged(message), user: user, &scope)
            scope.result.removedItems += identifiers
        }
        scope.result.removedItems.sort(by: utf8Less)
    }

    // MARK: Batches

    func beginIndexBatch(_ index: String, _ scope: inout CommandScope) throws {
        let operation = "beginIndexBatch"
        try ActivityRules.checkIdentifier(index, field: "index", operation: operation)
        guard openBatches[IndexBatchKey(user: scope.user, index: index)] == nil else {
            throw ActivityError(.invalidIndexBatch, operation: operation, field: "index", value: index,
                                allowed: "one open batch per index: end it with endIndexBatch before beginning another")
        }
        openBatches[IndexBatchKey(user: scope.user, index: index)] = (batch.head + 1, scope.index)
    }

    func endIndexBatch(_ index: String, clientState: Data, expected: Data?, _ scope: inout CommandScope) throws {
        let operation = "endIndexBatch"
        try ActivityRules.checkIdentifier(index, field: "index", operation: operation)
        try SpotlightRules.checkClientState(clientState, field: "clientState", operation: operation)
        if let expected { try SpotlightRules.checkClientState(expected, field: "expectedClientState", operation: operation) }
        guard let open = openBatches[IndexBatchKey(user: scope.user, index: index)] else {
            throw ActivityError(.invalidIndexBatch, operation: operation, field: "index", value: index,
                                allowed: "the index of a beginIndexBatch earlier in the same batch of commands")
        }
        let stored = try items.clientState(ofIndex: index, space: scope.space, in: txn)
        if let expected, expected != stored {
            throw ActivityError(.mismatchedClientState, operation: operation, field: "expectedClientState",
                                value: expected.base64EncodedString(),
                                allowed: "the stored client state of index \"\(index)\": \(stored.map { $0.base64EncodedString() } ?? "none")")
        }
        var message = Activitylog_V1_IndexBatchCommitted()
        message.index = index
        message.clientState = clientState
        if let stored { message.previousClientState = stored }
        if let expected { message.expectedClientState = expected }
        message.firstPosition = open.firstPosition
        try append(.batchCommitted(message), &scope)
        openBatches[IndexBatchKey(user: scope.user, index: index)] = nil
    }
}
