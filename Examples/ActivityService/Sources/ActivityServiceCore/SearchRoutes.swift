import ActivityDomain
import Foundation
import Hummingbird

/// Search and query over the token's user's items and saved activities,
/// each hit with its document, from one read.
///
/// | route | answers |
/// |---|---|
/// | `GET /v1/search?q=[&limit=&now=&after=]` | `[SearchResult]`: free text, by score |
/// | `GET /v1/query?q=[&now=&after=]` | `[SearchResult]`: the query language (`Docs/Search.md`), by identifier |
///
/// `after=P` (a position a write returned, `CommandResult.positions.last`)
/// waits, up to ``ServiceConfiguration/afterTimeout`` each, until the store
/// holds P (``ActivityStore/waitForPosition(_:timeout:)``: a follower may
/// not have it yet) and then until the keyword index, which follows the
/// log, has applied it (the search's own `after:`): read-your-writes.
struct SearchRoutes {
    let store: ActivityStore
    let afterTimeout: Duration

    func add(to group: RouterGroup<ServiceRequestContext>) {
        group.get("search") { request, context in
            let text = try Self.required(request, "q")
            let limit = try request.integer("limit", default: 20, in: 0...1000)
            let now = try request.now()
            let after = try await waitForAfter(request)
            return JSONBody(try await context.space(in: store).read(after: after, timeout: afterTimeout) {
                try $0.searchDocuments(text, now: now, limit: limit)
            })
        }
        group.get("query") { request, context in
            let expression = try Self.required(request, "q")
            let now = try request.now()
            let after = try await waitForAfter(request)
            return JSONBody(try await context.space(in: store).read(after: after, timeout: afterTimeout) {
                try $0.queryDocuments(expression, now: now)
            })
        }
    }

    /// The request's `after`, once the store's log holds it.
    func waitForAfter(_ request: Request) async throws -> UInt64? {
        guard let after = try request.position("after") else { return nil }
        try await store.waitForPosition(after, timeout: afterTimeout)
        return after
    }

    static func required(_ request: Request, _ name: String) throws -> String {
        guard let value = try request.query(name) else {
            throw ServiceError(.badRequest, code: "invalidValue", message: "?\(name)= is required")
        }
        return value
    }
}
