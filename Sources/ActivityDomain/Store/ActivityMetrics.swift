import Dispatch
import EventLog
import Metrics

/// What the activity domain reports through swift-metrics, beside the
/// engine's ``EventLog/StoreMetrics`` (`Docs/Services.md`, "Metrics"), with
/// the dimension `store` (the store's directory):
///
/// | label | kind | what |
/// |---|---|---|
/// | `activity_search_duration` | timer | a search or query of the keyword index (dimension `kind`: `search` or `query`) |
struct ActivityMetrics: Sendable {
    let search: Timer
    let query: Timer

    init(path: String) {
        search = Timer(label: "activity_search_duration", dimensions: [("store", path), ("kind", "search")])
        query = Timer(label: "activity_search_duration", dimensions: [("store", path), ("kind", "query")])
    }

    func timeSearch<R>(_ body: () throws -> R) rethrows -> R {
        try time(search, body)
    }

    func timeQuery<R>(_ body: () throws -> R) rethrows -> R {
        try time(query, body)
    }

    private func time<R>(_ timer: Timer, _ body: () throws -> R) rethrows -> R {
        let start = DispatchTime.now().uptimeNanoseconds
        defer { timer.recordNanoseconds(Int64(clamping: DispatchTime.now().uptimeNanoseconds - start)) }
        return try body()
    }
}
