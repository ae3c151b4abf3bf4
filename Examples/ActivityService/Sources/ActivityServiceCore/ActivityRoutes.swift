import ActivityDomain
import Foundation
import Hummingbird

/// NSUserActivity with Apple's names, in the token's user's space.
///
/// | route | does | answers |
/// |---|---|---|
/// | `POST /v1/activities` | createActivity (body: the activity, `Docs/Operations.md`) | 201 `CommandResult` |
/// | `GET /v1/activities`, `GET /v1/activities/{id}` | the activities, one activity | `[ActivityRecord]`, `ActivityRecord` |
/// | `PATCH /v1/activities/{id}` | updateActivity (body: the properties to set; `null` clears) | `CommandResult` |
/// | `POST /v1/activities/{id}/userInfo` | addUserInfoEntries (body: the entries) | `CommandResult` |
/// | `POST /v1/activities/{id}/becomeCurrent`, `…/resignCurrent`, `…/invalidate` | the lifecycle | `CommandResult` |
/// | `GET /v1/current[?device=]` | the current activities (of a device) | `[CurrentActivity]` |
/// | `GET /v1/handoff?device=[&now=]` | what Handoff offers `device` | `[CurrentActivity]` |
/// | `GET /v1/saved`, `POST /v1/saved/delete` (body `{"persistentIdentifiers":[…]}`), `DELETE /v1/saved` | saved copies | `[SavedActivity]`, `CommandResult` |
/// | `GET /v1/suggestions[?now=&limit=]` | Siri's suggestions | `[Suggestion]` |
/// | `GET /v1/resolve?identifier=` | what a link names, or when it went | `SavedActivityResolution` |
struct ActivityRoutes {
    let store: ActivityStore

    func add(to group: RouterGroup<ServiceRequestContext>) {
        group.post("activities") { request, context in
            var activity = try await request.decode(as: UserActivity.self, context: context)
            let user = try context.requireIdentity()
            // The owner is the token's user; a body naming another is refused by the store (invalidUser).
            if activity.user == nil { activity.user = user }
            let result = try await store.user(user).write { [activity] in try $0.createActivity(activity) }
            let location = "/v1/activities/" + (activity.activity.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(CharacterSet(charactersIn: "/"))) ?? activity.activity)
            return try JSONBody(result, status: .created).response(from: request, context: context, headers: [.location: location])
        }
        group.get("activities") { _, context in
            JSONBody(try await context.space(in: store).read { try $0.activities() })
        }
        group.get("activities/:id") { _, context in
            let id = try context.pathParameter("id")
            guard let record = try await context.space(in: store).read({ try $0.activity(id) }) else {
                throw ActivityError(.unknownActivity, operation: "activity", field: "activity", value: id, allowed: "the id of a created activity")
            }
            return JSONBody(record)
        }
        group.patch("activities/:id") { request, context in
            let id = try context.pathParameter("id")
            let command = try await request.operation("updateActivity", context: context, adding: [("activity", .string(id))])
            return JSONBody(try await perform(command, context))
        }
        group.post("activities/:id/userInfo") { request, context in
            let id = try context.pathParameter("id")
            let entries = try await request.decode(as: JSONValue.self, context: context)
            let command = try OperationDecoder().decode(.object([("op", .string("addUserInfoEntries")), ("activity", .string(id)),
                                                                 ("entries", entries)])).command
            return JSONBody(try await perform(command, context))
        }
        group.post("activities/:id/becomeCurrent") { _, context in
            let id = try context.pathParameter("id")
            return JSONBody(try await context.space(in: store).write { try $0.becomeCurrent(id) })
        }
        group.post("activities/:id/resignCurrent") { _, context in
            let id = try context.pathParameter("id")
            return JSONBody(try await context.space(in: store).write { try $0.resignCurrent(id) })
        }
        group.post("activities/:id/invalidate") { _, context in
            let id = try context.pathParameter("id")
            return JSONBody(try await context.space(in: store).write { try $0.invalidate(id) })
        }
        group.get("current") { request, context in
            let space = try context.space(in: store)
            if let device = try request.query("device") {
                return JSONBody(try await space.read { try $0.currentActivity(onDevice: device) }.map { [$0] } ?? [])
            }
            return JSONBody(try await space.read { try $0.currentActivities() })
        }
        group.get("handoff") { request, context in
            guard let device = try request.query("device") else {
                throw ServiceError(.badRequest, code: "invalidValue", message: "handoff needs ?device=: the device that asks")
            }
            let now = try request.now()
            return JSONBody(try await context.space(in: store).read { try $0.handoffCandidates(device: device, now: now) })
        }
        group.get("saved") { _, context in
            JSONBody(try await context.space(in: store).read { try $0.savedActivities() })
        }
        group.post("saved/delete") { request, context in
            JSONBody(try await perform(try await request.operation("deleteSavedUserActivities", context: context), context))
        }
        group.delete("saved") { _, context in
            JSONBody(try await context.space(in: store).write { try $0.deleteAllSavedUserActivities() })
        }
        group.get("suggestions") { request, context in
            let limit = try request.integer("limit", default: 10, in: 0...1000)
            let now = try request.now()
            return JSONBody(try await context.space(in: store).read { try $0.suggestions(now: now, limit: limit) })
        }
        group.get("resolve") { request, context in
            guard let identifier = try request.query("identifier") else {
                throw ServiceError(.badRequest, code: "invalidValue",
                                   message: "resolve needs ?identifier=: a persistentIdentifier, targetContentIdentifier or webpageURL")
            }
            return JSONBody(try await context.space(in: store).read { try $0.resolve(identifier) })
        }
    }

    /// Runs one command in the token's user's space.
    func perform(_ command: ActivityCommand, _ context: ServiceRequestContext) async throws -> CommandResult {
        try await context.space(in: store).write([command])[0]
    }
}
