import ActivityDomain
import EventLog
import Foundation
import HTTPTypes
import Hummingbird
import ServiceLifecycle

/// `GET /v1/changes`: the token's user's changes as server-sent events
/// (`text/event-stream`), live: what another device of the user listens to,
/// so that it sees the phone's `becomeCurrent` and offers Handoff.
///
/// Each event is one change (``UserChange``): `id` its log position, `event`
/// its type, `data` its JSON (the line `eventlog log --json` prints):
///
/// ```
/// id: 42
/// event: activity.becameCurrent
/// data: {"at":"2026-11-22T10:00:04Z","event":{"activity":"a1","device":"phone","user":"alice"},"position":42,"type":"activity.becameCurrent","version":2}
/// ```
///
/// Where it starts: after `Last-Event-ID` (what an `EventSource` sends when
/// it reconnects: no change missed, none twice), else at `?from=P`, else
/// after the store's head (new changes only). It ends with an `error` event
/// when the user is forgotten (`userForgotten`) or the store closes, and
/// when the service shuts down gracefully.
struct ChangeFeedRoute {
    let store: ActivityStore

    func add(to group: RouterGroup<ServiceRequestContext>) {
        group.get("changes") { request, context -> Response in
            let space = try context.space(in: store)
            let start: Position
            if let last = request.headers[.lastEventID] {
                // The last position there is has no position after it (and + 1 would trap).
                guard let position = UInt64(last), position < .max else {
                    throw ServiceError(.badRequest, code: "invalidValue", message: "Last-Event-ID \"\(last)\" is not a log position; allowed: 0 to \(UInt64.max - 1)")
                }
                start = position + 1
            } else if let from = try request.position("from") {
                start = max(from, 1)
            } else {
                start = try await store.eventStore.read { try store.eventStore.head(in: $0) } + 1
            }
            let feed = space.changes(from: start)
            let body = ResponseBody { writer in
                // The feed is read by a task of its own, into a stream this
                // one writes out; graceful shutdown (or the client leaving)
                // ends both: a server that drains its requests must not
                // wait for a feed that never ends.
                let (events, sink) = AsyncStream<String>.makeStream(bufferingPolicy: .bufferingNewest(10_000))
                let reader = Task {
                    do {
                        for try await change in feed { sink.yield(Self.event(change)) }
                    } catch {
                        sink.yield(Self.errorEvent(ServiceError(error)))
                    }
                    sink.finish()
                }
                await withGracefulShutdownHandler {
                    for await text in events {
                        do { try await writer.write(ByteBuffer(string: text)) } catch { break }
                    }
                } onGracefulShutdown: {
                    reader.cancel()
                    sink.finish()
                }
                reader.cancel()
                try await writer.finish(nil)
            }
            return Response(status: .ok, headers: [.contentType: "text/event-stream; charset=utf-8", .cacheControl: "no-cache"], body: body)
        }
    }

    /// The event that ends a feed: why.
    static func errorEvent(_ error: ServiceError) -> String {
        "event: error\ndata: \(JSONValue.object([("error", error.body)]).serialized())\n\n"
    }

    /// One server-sent event.
    static func event(_ change: UserChange) -> String {
        let data = (try? ActivityJSON.string(change)) ?? "{}"
        return "id: \(change.position)\nevent: \(change.type)\ndata: \(data)\n\n"
    }
}

extension HTTPField.Name {
    static let lastEventID = Self("Last-Event-ID")!
}
