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
/// waits, up to ``ServiceConfiguration/afterTimeout``, until the store holds
/// P, then searches: read-your-writes when this service reads a follower, or
/// a keyword index that follows the log. Today it waits for the store's
/// head (``ActivityStore/waitForPosition(_:timeout:)``); where the library's
/// search takes `after:` itself, it is handed on there.
struct SearchRoutes {
    let store: ActivityStore
    let afterTimeout: Duration

    func add(to group: RouterGroup<ServiceRequestContext>) {
        group.get("search") { request, context in
            let text = try Self.required(request, "q")
            let limit = try request.integer("limit", default: 20, in: 0...1000)
            let now = try request.now()
            try await waitForAfter(request)
            return JSONBody(try await context.space(in: store).searchDocuments(text, now: now, limit: limit))
        }
        group.get("query") { request, context in
            let expression = try Self.required(request, "q")
            let now = try request.now()
            try await waitForAfter(request)
            return JSONBody(try await context.space(in: store).queryDocuments(expression, now: now))
        }
    }

    func waitForAfter(_ request: Request) async throws {
        if let after = try request.position("after") { try await store.waitForPosition(after, timeout: afterTimeout) }
    }

    static func required(_ request: Request, _ name: String) throws -> String {
        guard let value = request.query(name) else {
            throw ServiceError(.badRequest, code: "invalidValue", message: "?\(name)= is required")
        }
        return value
    }
}
