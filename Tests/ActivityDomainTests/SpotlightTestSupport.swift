import EventLog
import Foundation
import LMDB
import Testing
import TextIndex
@testable import ActivityDomain

/// Everything Core Spotlight's views answer, read in one transaction: what
/// must come back identical when the store is reopened.
struct SpotlightViewState: Equatable {
    var head: Position
    var items: [IndexedItem]
    var clientStates: [IndexClientState]
    var documents: [IndexDocument]
    var statistics: IndexStatistics
}

extension ActivityStore {
    func spotlightState() throws -> SpotlightViewState {
        try readIndex { index, indexTxn, txn in
            SpotlightViewState(
                head: try eventStore.head(in: txn),
                items: try views.items.all(space: 0, in: txn),
                clientStates: try views.items.allClientStates(space: 0, in: txn),
                documents: try index.documents(in: indexTxn, contentIn: txn),
                statistics: try index.statistics(in: indexTxn))
        }
    }
}

/// Runs `body` on a fresh store, reopens it and compares every view,
/// Core Spotlight's included; removes the directory afterwards.
func withReopenedSpotlightStore(_ body: (ActivityStore) throws -> Void) throws {
    let path = temporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: path) }
    let before: SpotlightViewState
    let activityBefore: ViewState
    do {
        let store = try ActivityStore(path: path, options: testOptions())
        try body(store)
        before = try store.spotlightState()
        activityBefore = try store.viewState()
    }
    let reopened = try ActivityStore(path: path, options: testOptions())
    #expect(try reopened.spotlightState() == before, "Core Spotlight views differ after reopening")
    #expect(try reopened.viewState() == activityBefore, "activity views differ after reopening")
    let report = try reopened.eventStore.verify(payloadCheck: ActivityEventCatalog.checkPayload)
    #expect(report.isValid, "\(String(describing: report.firstProblem))")
}

/// An item with a title, keywords and a domain.
func makeItem(_ id: String, domain: String? = nil, title: String? = nil, keywords: [String] = [],
              configure: (inout SearchableItem) -> Void = { _ in }) -> SearchableItem {
    var item = SearchableItem(uniqueIdentifier: id, domainIdentifier: domain)
    item.attributeSet.title = title
    item.attributeSet.keywords = keywords
    configure(&item)
    return item
}

/// The identifiers of hits, in order.
func ids(_ hits: [SearchHit]) -> [String] { hits.map(\.identifier) }
