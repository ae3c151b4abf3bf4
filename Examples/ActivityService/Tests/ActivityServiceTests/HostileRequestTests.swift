import ActivityDomain
import ActivityServiceCore
import Foundation
import Hummingbird
import HummingbirdTesting
import Testing

/// SPEC §2 through HTTP: names are bytes (a query or path parameter that is
/// not UTF-8 is refused, never read as U+FFFD, another user's or item's
/// name), a parameter given twice is refused, and a header at the edge of
/// its range is a 400, never a trap.
@Suite("Hostile requests")
struct HostileRequestTests {
    /// Alice's item in domain U+FFFD: what a lenient decoding of `%FF` would name.
    static func seed(_ store: ActivityStore) async throws {
        var attributes = ContentAttributeSet()
        attributes.title = "secret"
        _ = try await store.user("alice").write { [attributes] in try $0.indexSearchableItems([
            SearchableItem(uniqueIdentifier: "\u{FFFD}", domainIdentifier: "\u{FFFD}", attributeSet: attributes),
        ]) }
    }

    @Test("a query parameter whose bytes are not UTF-8 is refused, naming it; the U+FFFD it would have become is another name")
    func queryNotUTF8() async throws {
        try await withService { client, store in
            try await Self.seed(store)
            for uri in ["/v1/items?domain=%FF", "/v1/items?domain=%C3", "/v1/items?domain=%ED%A0%80", "/v1/items?domain=%F", "/v1/items?domain=\u{FFFD}",
                        "/v1/current?device=%FF", "/v1/handoff?device=%C3%28", "/v1/resolve?identifier=%FF", "/v1/search?q=%FF", "/v1/query?q=%80"] {
                let response = try await client.call(.get, uri, as: "alice")
                #expect(response.status == .badRequest && response.errorCode == "invalidValue", "\(uri): \(response.status) \(response.text)")
                #expect(!response.text.contains("secret"), "\(uri): \(response.text)")
            }
            // The name U+FFFD itself, percent-encoded, is a name like any other.
            let real = try await client.call(.get, "/v1/items?domain=%EF%BF%BD", as: "alice")
            #expect(real.status == .ok && real.json.arrayCount == 1, "\(real.text)")
        }
    }

    @Test("a path parameter not percent-encoded past ASCII, or not UTF-8, is refused")
    func pathNotUTF8() async throws {
        try await withService { client, store in
            try await Self.seed(store)
            for uri in ["/v1/items/%FF", "/v1/items/\u{FFFD}", "/v1/clientState/%C3"] {
                let response = try await client.call(.get, uri, as: "alice")
                #expect(response.status == .badRequest && response.errorCode == "invalidValue", "\(uri): \(response.status) \(response.text)")
            }
            #expect(try await client.call(.get, "/v1/items/%EF%BF%BD", as: "alice").status == .ok)
        }
    }

    @Test("a query parameter given twice is refused, naming it")
    func repeatedParameter() async throws {
        try await withService { client, store in
            try await Self.seed(store)
            for uri in ["/v1/items?domain=a&domain=%EF%BF%BD", "/v1/search?q=secret&q=x", "/v1/suggestions?limit=1&limit=2"] {
                let response = try await client.call(.get, uri, as: "alice")
                #expect(response.status == .badRequest && response.text.contains("given twice"), "\(uri): \(response.text)")
            }
        }
    }

    @Test("Last-Event-ID at the end of the positions is a 400, never an overflow trap")
    func lastEventIDAtTheEnd() async throws {
        try await withService { client, _ in
            for id in ["18446744073709551615", "18446744073709551616", "-1", "1e3"] {
                let response = try await client.call(.get, "/v1/changes", as: "alice", headers: [.init("Last-Event-ID")!: id])
                #expect(response.status == .badRequest && response.errorCode == "invalidValue", "\(id): \(response.status) \(response.text)")
            }
        }
    }
}
