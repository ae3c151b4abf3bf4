import ActivityDomain
import ActivityServiceCore
import Foundation
import Hummingbird
import HummingbirdTesting
import Testing

/// The change feed through a real socket: a device listens, another device
/// of the same user becomes current, and the listener sees it as it happens.
@Suite("Change feed over HTTP")
struct ChangeFeedTests {
    @Test("a device listening on /v1/changes sees another device's becomeCurrent live, and nothing of another user")
    func deviceSeesBecomeCurrent() async throws {
        try await withService(.live) { client, store in
            let port = try #require(client.port)
            let laptop = try RawConnection(port: port)
            try laptop.send("GET /v1/changes HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(token("alice"))\r\nAccept: text/event-stream\r\n\r\n")
            let head = try await laptop.read { $0.contains("\r\n\r\n") }
            #expect(head.hasPrefix("HTTP/1.1 200") && head.contains("text/event-stream"), "\(head)")
            // Bob's phone and alice's phone are busy; alice's laptop is listening.
            #expect(try await client.call(.post, "/v1/activities", as: "bob",
                                          json: #"{"activity":"b1","activityType":"com.example.app.viewOrder","device":"phone"}"#).status == .created)
            #expect(try await client.call(.post, "/v1/activities/b1/becomeCurrent", as: "bob").status == .ok)
            #expect(try await client.call(.post, "/v1/activities", as: "alice",
                                          json: #"{"activity":"a1","activityType":"com.example.app.viewOrder","device":"phone","title":"Latte"}"#).status == .created)
            let becameCurrent = try await client.call(.post, "/v1/activities/a1/becomeCurrent", as: "alice")
            let position = try #require(becameCurrent.json["positions"]?["first"]).integerValue
            let stream = try await laptop.read { $0.contains("event: activity.becameCurrent") }
            #expect(stream.contains("id: \(position)\nevent: activity.becameCurrent\ndata: "), "\(stream)")
            #expect(stream.contains(#""device":"phone""#) && stream.contains("event: activity.created"))
            #expect(!stream.contains(#""user":"bob""#) && !stream.contains("b1"), "another user's event reached alice's feed: \(stream)")
            // What the feed sent is the library's JSON of the change.
            var changes = store.user("alice").changes(from: UInt64(position)).makeAsyncIterator()
            let change = try #require(try await changes.next())
            #expect(stream.contains("data: \(try ActivityJSON.string(change))\n\n"))
        }
    }

    @Test("a feed resumes after Last-Event-ID: no change missed, none twice")
    func resumesAfterLastEventID() async throws {
        try await withService(.live) { client, store in
            let port = try #require(client.port)
            for i in 1...3 {
                _ = try await client.call(.post, "/v1/activities", as: "alice",
                                          json: #"{"activity":"a\#(i)","activityType":"com.example.app.viewOrder","device":"phone"}"#)
            }
            let positions = try store.user("alice").activities().map(\.createdPosition).sorted()
            let device = try RawConnection(port: port)
            try device.send("GET /v1/changes HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(token("alice"))\r\nLast-Event-ID: \(positions[0])\r\n\r\n")
            let stream = try await device.read { $0.contains("id: \(positions[2])\n") }
            #expect(!stream.contains("id: \(positions[0])\n") && stream.contains("id: \(positions[1])\n"), "\(stream)")
        }
    }
}
