import ActivityDomain
import Foundation
import Hummingbird

/// Core Spotlight with Apple's names, in the token's user's space.
///
/// | route | does | answers |
/// |---|---|---|
/// | `POST /v1/items` | indexSearchableItems (body `{"items":[…]}`); with `index`, `clientState` (base64) and optionally `expectedClientState`, as one index batch | `CommandResult` |
/// | `GET /v1/items[?domain=]`, `GET /v1/items/{id}` | the items (of a domain and below), one item | `[IndexedItem]`, `IndexedItem` |
/// | `POST /v1/items/fetch` (body `{"identifiers":[…]}`) | the items with these identifiers, in one read | `[IndexedItem]` |
/// | `DELETE /v1/items/{id}`, `POST /v1/items/delete` (body `{"identifiers":[…]}`) | deleteSearchableItems | `CommandResult` |
/// | `POST /v1/items/deleteDomains` (body `{"domains":[…]}`) | deleteSearchableItemsInDomains | `CommandResult` |
/// | `DELETE /v1/items` | deleteAllSearchableItems | `CommandResult` |
/// | `GET /v1/clientState/{index}` | fetchLastClientState | `{"index","clientState"}` (base64 or null) |
struct ItemRoutes {
    let store: ActivityStore

    func add(to group: RouterGroup<ServiceRequestContext>) {
        group.post("items") { request, context in
            let body = try await request.decode(as: JSONValue.self, context: context)
            let space = try context.space(in: store)
            guard let index = body["index"] else {
                let command = try OperationDecoder().decode(Self.members(of: body, op: "indexSearchableItems")).command
                return JSONBody(try await space.write([command])[0])
            }
            // An index batch: the items and the new client state commit together.
            let items = try OperationDecoder().decode(Self.members(of: body.removing(["index", "clientState", "expectedClientState"]),
                                                                   op: "indexSearchableItems")).command
            let end = try OperationDecoder().decode(.object([("op", .string("endIndexBatch")), ("index", index),
                                                             ("clientState", body["clientState"] ?? .null),
                                                             ("expectedClientState", body["expectedClientState"] ?? .null)])).command
            guard case .endIndexBatch(let name, _, _) = end else { throw CancellationError() }
            let results = try await space.write([.beginIndexBatch(index: name), items, end])
            return JSONBody(results[1])
        }
        group.get("items") { request, context in
            let space = try context.space(in: store)
            if let domain = try request.query("domain") { return JSONBody(try await space.read { try $0.items(inDomain: domain) }) }
            return JSONBody(try await space.read { try $0.items() })
        }
        group.get("items/:id") { _, context in
            let id = try context.pathParameter("id")
            guard let item = try await context.space(in: store).read({ try $0.item(id) }) else {
                throw ServiceError(.notFound, code: "unknownItem", message: "no searchable item \"\(id)\"")
            }
            return JSONBody(item)
        }
        group.post("items/fetch") { request, context in
            let body = try await request.decode(as: JSONValue.self, context: context)
            guard case .array(let values)? = body["identifiers"] else {
                throw ServiceError(.badRequest, code: "invalidValue", message: "the body must be {\"identifiers\":[…]}")
            }
            let identifiers = try values.map { value -> String in
                guard case .string(let id) = value else {
                    throw ServiceError(.badRequest, code: "invalidValue", message: "identifiers must be strings")
                }
                return id
            }
            return JSONBody(try await context.space(in: store).read { try $0.items(withIdentifiers: identifiers) })
        }
        group.delete("items/:id") { _, context in
            let id = try context.pathParameter("id")
            return JSONBody(try await context.space(in: store).write { try $0.deleteSearchableItems(withIdentifiers: [id]) })
        }
        group.post("items/delete") { request, context in
            JSONBody(try await perform(try await request.operation("deleteSearchableItems", context: context), context))
        }
        group.post("items/deleteDomains") { request, context in
            JSONBody(try await perform(try await request.operation("deleteSearchableItemsInDomains", context: context), context))
        }
        group.delete("items") { _, context in
            JSONBody(try await context.space(in: store).write { try $0.deleteAllSearchableItems() })
        }
        group.get("clientState/:index") { _, context in
            let index = try context.pathParameter("index")
            let state = try await context.space(in: store).read { try $0.fetchLastClientState(index: index) }
            return JSONBody(JSONValue.object([("index", .string(index)), ("clientState", state.map { .string($0.base64EncodedString()) } ?? .null)]))
        }
    }

    /// `body` as the members of `op`: refused when it names the user or a time.
    static func members(of body: JSONValue, op: String) throws -> JSONValue {
        guard case .object(let given) = body else {
            throw ServiceError(.badRequest, code: "malformedOperation", message: "the body must be a JSON object (the members of \(op))")
        }
        for name in ["op", "user", "at"] where given.contains(where: { $0.key == name }) {
            throw ServiceError(.badRequest, code: "malformedOperation", message: "\(name) is not taken from the body")
        }
        return .object([("op", .string(op))] + given)
    }

    func perform(_ command: ActivityCommand, _ context: ServiceRequestContext) async throws -> CommandResult {
        try await context.space(in: store).write([command])[0]
    }
}
