import EventLog
import Foundation
import LMDB

/// Runs Core Spotlight's commands inside the engine's write path, for
/// ``ActivityCommandExecutor``: validates each against the item store
/// (which already holds this transaction's earlier events), decides the
/// outcome (merges, default expirations, removed identifiers) and appends it
/// as one event, so that projections only apply what the event says.
///
/// It also keeps the index batches begun in this transaction: an
/// `endIndexBatch` needs its `beginIndexBatch` earlier in the same
/// transaction, and ``finish()`` rejects a batch left open.
final class SpotlightCommandExecutor {
    let views: ActivityViews
    let batch: LogBatch

    /// Open batches: index name → (first position of the batch, index of the begin command).
    private var openBatches: [String: (firstPosition: Position, commandIndex: Int)] = [:]
    private var appendedTypes: [String] = []

    init(views: ActivityViews, batch: LogBatch) {
        self.views = views
        self.batch = batch
    }

    private var txn: WriteTransaction { batch.transaction }
    private var items: SearchableItemStore { views.items }

    /// Runs one command; returns the types of the events it appended.
    func execute(_ command: ActivityCommand, commandIndex: Int, at time: Date, result: inout CommandResult) throws -> [String] {
        appendedTypes = []
        switch command {
        case .indexSearchableItems(let given): try index(given, at: time, result: &result)
        case .deleteSearchableItems(let ids): try delete(ids, at: time, result: &result)
        case .deleteSearchableItemsInDomains(let domains): try deleteInDomains(domains, at: time, result: &result)
        case .deleteAllSearchableItems: try deleteAll(at: time, result: &result)
        case .purgeExpired(let now): try purgeExpired(now: now, at: time, result: &result)
        case .beginIndexBatch(let index): try begin(index, commandIndex: commandIndex)
        case .endIndexBatch(let index, let state, let expected): try end(index, clientState: state, expected: expected, at: time)
        default: preconditionFailure("\(command.operation) is not a Core Spotlight command")
        }
        return appendedTypes
    }

    /// Throws when a batch was begun and not ended.
    func finish() throws {
        guard let (index, open) = openBatches.min(by: { $0.value.commandIndex < $1.value.commandIndex }) else { return }
        var error = ActivityError(.invalidIndexBatch, operation: "beginIndexBatch", field: "index", value: index,
                                  allowed: "an endIndexBatch of the same index later in the same batch of commands")
        error.commandIndex = open.commandIndex
        throw error
    }

    private func append(_ event: SpotlightEvent, at time: Date) throws {
        let recorded = try batch.append(event.newEvent(at: time))
        appendedTypes.append(recorded.type)
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

    private func index(_ given: [SearchableItem], at time: Date, result: inout CommandResult) throws {
        let operation = "indexSearchableItems"
        let items = given.map(\.normalized)
        for item in items { try SpotlightRules.checkItem(item, operation: operation) }
        guard !items.isEmpty else { return }
        var pending: [String: Pending] = [:]
        var dropped = Set<String>()
        for item in items {
            let id = item.uniqueIdentifier
            var state: Pending? = pending[id]
            if state == nil, let stored = try self.items.rawRecord(id, in: txn) {
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
                var replacement = item
                replacement.attributesToRemove = []
                let defaultExpiration = item.expirationDate == nil
                if defaultExpiration { replacement.expirationDate = SpotlightRules.defaultExpiration(indexedAt: time) }
                pending[id] = Pending(item: replacement, defaultExpiration: defaultExpiration,
                                      existedBefore: state?.existedBefore ?? false, replaced: true)
            }
        }
        var message = Activitylog_V1_SearchableItemsIndexed()
        for id in pending.keys.sorted(by: utf8Less) {
            let state = pending[id]!
            var indexed = Activitylog_V1_IndexedItem()
            indexed.item = state.item.proto
            indexed.item.defaultExpiration = state.defaultExpiration
            indexed.outcome = !state.existedBefore ? .added : state.replaced ? .replaced : .merged
            if indexed.outcome == .merged {
                indexed.setAttributes = state.setAttributes.sorted(by: utf8Less)
                indexed.removedAttributes = state.removedAttributes.sorted(by: utf8Less)
            }
            message.items.append(indexed)
        }
        message.droppedUpdates = dropped.sorted(by: utf8Less)
        try append(.itemsIndexed(message), at: time)
        result.droppedUpdates = message.droppedUpdates
    }

    private func delete(_ ids: [String], at time: Date, result: inout CommandResult) throws {
        let operation = "deleteSearchableItems"
        for id in ids { try ActivityRules.checkIdentifier(id, field: "identifiers", operation: operation) }
        let requested = Set(ids).sorted(by: utf8Less)
        guard !requested.isEmpty else { return }
        var message = Activitylog_V1_SearchableItemsDeleted()
        message.identifiers = requested
        message.removedIdentifiers = try requested.filter { try items.records.contains($0, in: txn) }
        // Written even when nothing matched: the request is a fact an auditor wants.
        try append(.itemsDeleted(message), at: time)
        result.removedItems = message.removedIdentifiers
    }

    private func deleteInDomains(_ domains: [String], at time: Date, result: inout CommandResult) throws {
        let operation = "deleteSearchableItemsInDomains"
        for domain in domains { try SpotlightRules.checkDomainIdentifier(domain, operation: operation, field: "domains") }
        let requested = Set(domains).sorted(by: utf8Less)
        guard !requested.isEmpty else { return }
        var removed = Set<String>()
        for domain in requested { removed.formUnion(try items.identifiers(inDomain: domain, in: txn)) }
        var message = Activitylog_V1_SearchableItemsInDomainsDeleted()
        message.domainIdentifiers = requested
        message.removedIdentifiers = removed.sorted(by: utf8Less)
        try append(.domainsDeleted(message), at: time)
        result.removedItems = message.removedIdentifiers
    }

    private func deleteAll(at time: Date, result: inout CommandResult) throws {
        var message = Activitylog_V1_SearchableItemsAllDeleted()
        message.removedIdentifiers = try items.allIdentifiers(in: txn)
        message.forgottenClientStateIndexes = try items.allClientStates(in: txn).map(\.index)
        try append(.allDeleted(message), at: time)
        result.removedItems = message.removedIdentifiers
    }

    private func purgeExpired(now: Date, at time: Date, result: inout CommandResult) throws {
        let expired = try items.expiredIdentifiers(at: now, in: txn)
        // Nothing expired, nothing to say: a periodic purge does not fill the log.
        guard !expired.isEmpty else { return }
        var message = Activitylog_V1_SearchableItemsExpiredPurged()
        message.nowMicros = now.eventMicroseconds
        message.removedIdentifiers = expired
        try append(.expiredPurged(message), at: time)
        result.removedItems = expired
    }

    // MARK: Batches

    private func begin(_ index: String, commandIndex: Int) throws {
        let operation = "beginIndexBatch"
        try ActivityRules.checkIdentifier(index, field: "index", operation: operation)
        guard openBatches[index] == nil else {
            throw ActivityError(.invalidIndexBatch, operation: operation, field: "index", value: index,
                                allowed: "one open batch per index: end it with endIndexBatch before beginning another")
        }
        openBatches[index] = (batch.head + 1, commandIndex)
    }

    private func end(_ index: String, clientState: Data, expected: Data?, at time: Date) throws {
        let operation = "endIndexBatch"
        try ActivityRules.checkIdentifier(index, field: "index", operation: operation)
        try SpotlightRules.checkClientState(clientState, field: "clientState", operation: operation)
        if let expected { try SpotlightRules.checkClientState(expected, field: "expectedClientState", operation: operation) }
        guard let open = openBatches[index] else {
            throw ActivityError(.invalidIndexBatch, operation: operation, field: "index", value: index,
                                allowed: "the index of a beginIndexBatch earlier in the same batch of commands")
        }
        let stored = try items.clientState(ofIndex: index, in: txn)
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
        try append(.batchCommitted(message), at: time)
        openBatches[index] = nil
    }
}
