import ActivityDomain
import ActivityServiceCore
import Foundation
import Hummingbird

// The peer of Examples/ActivityService for the load benchmark: the same
// routes the mixes use (create, becomeCurrent, current, index items,
// search), the same tokens, bodies and JSON, on GRDB.
//
//   ACTIVITY_SERVICE_KEY=… PEER_STORE=/tmp/peer ACTIVITY_PORT=8081 GRDBPeerService
let environment = ProcessInfo.processInfo.environment
do {
    let configuration = try ServiceConfiguration(environment: environment)
    let store = try PeerStore(path: environment["PEER_STORE"] ?? "./peer-store")
    // A diagnostic only (PeerStore.search): how the peer a team writes first compares.
    let globalMatch = environment["PEER_SEARCH"] == "global"
    let cachedSearch = environment["PEER_STATEMENTS"] == "cached"
    let router = Router(context: ServiceRequestContext.self)
    router.add(middleware: RequestIDMiddleware())
    router.add(middleware: ErrorMiddleware())
    router.get("health") { _, _ in
        let (items, activities) = try await store.counts()
        return JSONBody(JSONValue.object([("status", .string("ok")), ("items", .integer(Int64(items))), ("activities", .integer(Int64(activities)))]))
    }
    let api = router.group("v1").add(middleware: UserAuthenticator(key: configuration.signingKey))
    api.post("activities") { request, context in
        let activity = try await request.decode(as: UserActivity.self, context: context)
        let user = try context.requireIdentity()
        guard configuration.activityTypes.contains(where: { $0.utf8.elementsEqual(activity.activityType.utf8) }) else {
            throw ActivityError(.undeclaredActivityType, operation: "createActivity", field: "activityType", value: activity.activityType)
        }
        try await store.createActivity(activity, user: user)
        return try JSONBody(JSONValue.object([("operation", .string("createActivity"))]), status: .created)
            .response(from: request, context: context, headers: [.location: "/v1/activities/\(activity.activity)"])
    }
    api.post("activities/:id/becomeCurrent") { _, context in
        let id = try context.parameters.require("id").removingPercentEncoding ?? ""
        let superseded = try await store.becomeCurrent(id, user: try context.requireIdentity(), at: Date())
        return JSONBody(JSONValue.object([("operation", .string("becomeCurrent"))] + (superseded.map { [("superseded", JSONValue.string($0))] } ?? [])))
    }
    api.get("current") { _, context in
        JSONBody(JSONValue.array(try await store.currentActivities(user: try context.requireIdentity())))
    }
    api.post("items") { request, context in
        let body = try await request.decode(as: JSONValue.self, context: context)
        guard case .array(let values)? = body["items"] else {
            throw ServiceError(.badRequest, code: "malformedOperation", message: "the body must be {\"items\":[…]}")
        }
        let items = try values.map { try SearchableItem(json: $0) }
        try await store.indexItems(items, user: try context.requireIdentity(), at: Date())
        return JSONBody(JSONValue.object([("operation", .string("indexSearchableItems"))]))
    }
    api.get("search") { request, context in
        guard let text = request.uri.queryParameters.get("q") else { throw ServiceError(.badRequest, code: "invalidValue", message: "?q= is required") }
        let limit = request.uri.queryParameters.get("limit").flatMap { Int($0) } ?? 20
        return JSONBody(JSONValue.array(try await store.search(text, user: try context.requireIdentity(), now: Date(), limit: limit,
                                                               globalMatch: globalMatch, cachedSearch: cachedSearch)))
    }
    let app = Application(router: router, configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "grdb-peer"))
    try await app.runService(gracefulShutdownSignals: [.sigterm, .sigint])
} catch {
    FileHandle.standardError.write(Data("grdb-peer: \(error)\n".utf8))
    exit(1)
}
