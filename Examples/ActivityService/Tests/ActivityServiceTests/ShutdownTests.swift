import ActivityDomain
import ActivityServiceCore
import AsyncHTTPClient
import EventLog
import Foundation
import Hummingbird
import NIOCore
import ServiceLifecycle
import ServiceLifecycleTestKit
import Testing

/// Graceful shutdown with writes in flight: what SIGTERM does to a service
/// that 64 clients are writing to.
@Suite("Graceful shutdown")
struct ShutdownTests {
    @Test("with 64 clients writing, shutdown drains: each acknowledged write is stored, nothing else, no request hangs, the store closes",
          .timeLimit(.minutes(2)))
    func drainsWritesInFlight() async throws {
        var configuration = testConfiguration()
        configuration.storeOptions.store.durability = .durable
        defer { try? FileManager.default.removeItem(atPath: configuration.storePath) }
        let store = try ActivityStore.open(path: configuration.storePath, options: configuration.storeOptions)
        let port = PortBox()
        let app = try ActivityServiceApplication.make(configuration: configuration, store: store) { channel in
            port.set(channel.localAddress?.port ?? 0)
        }
        var clientConfiguration = HTTPClient.Configuration()
        clientConfiguration.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: 64)
        let http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: clientConfiguration)
        let outcome = try await testGracefulShutdown { trigger in
            try await withThrowingTaskGroup(of: Outcome?.self) { group in
                group.addTask {
                    try await app.run()
                    return nil
                }
                let url = "http://127.0.0.1:\(await port.value)/v1/activities"
                let acknowledgedSoFar = Counter()
                let outcome = try await withThrowingTaskGroup(of: Outcome.self) { clients in
                    for client in 0..<64 {
                        clients.addTask { try await Self.write(url: url, client: client, http: http, acknowledged: acknowledgedSoFar) }
                    }
                    while acknowledgedSoFar.value < 300 { try await Task.sleep(for: .milliseconds(2)) }
                    trigger.triggerGracefulShutdown()
                    var all = Outcome()
                    for try await one in clients { all.merge(one) }
                    return all
                }
                // The application (server, then store) ends by itself once drained.
                for try await _ in group {}
                return outcome
            }
        }
        try await http.shutdown()
        #expect(store.isClosed, "the store closed once the server had drained")
        #expect(outcome.hung == 0, "a request was left hanging")
        #expect(outcome.refused > 0, "writes went on after shutdown began, and were refused")
        let reopened = try ActivityStore.open(path: configuration.storePath, options: configuration.storeOptions)
        defer { reopened.close() }
        var stored: Set<String> = []
        for client in 0..<8 { stored.formUnion(try reopened.user("u\(client)").activities().map { "u\(client)/\($0.activity.activity)" }) }
        #expect(outcome.acknowledged.count >= 300)
        #expect(Set(outcome.acknowledged).isSubset(of: stored), "an acknowledged write is missing")
        #expect(stored == Set(outcome.acknowledged), "a write was stored that the service never acknowledged")
        #expect(try reopened.eventStore.verify(payloadCheck: ActivityEventCatalog.checkPayload).isValid)
    }

    /// What the clients saw.
    struct Outcome: Sendable {
        var acknowledged: [String] = []
        /// Requests refused or cut once shutdown began (no connection, 503).
        var refused = 0
        /// Requests that got no answer within their deadline.
        var hung = 0

        mutating func merge(_ other: Outcome) {
            acknowledged += other.acknowledged
            refused += other.refused
            hung += other.hung
        }
    }

    /// One client: creates activities until the service stops answering.
    static func write(url: String, client: Int, http: HTTPClient, acknowledged: Counter) async throws -> Outcome {
        var outcome = Outcome()
        let user = "u\(client % 8)"
        for i in 0..<100_000 {
            let id = "c\(client)-\(i)"
            var request = HTTPClientRequest(url: url)
            request.method = .POST
            request.headers.add(name: "Authorization", value: "Bearer \(token(user))")
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(string: #"{"activity":"\#(id)","activityType":"com.example.app.viewOrder","device":"phone"}"#))
            do {
                let response = try await http.execute(request, timeout: .seconds(20))
                _ = try await response.body.collect(upTo: 1 << 20)
                if response.status == .created {
                    outcome.acknowledged.append("\(user)/\(id)")
                    acknowledged.increment()
                    continue
                }
                outcome.refused += 1
                return outcome
            } catch let error as HTTPClientError where error == .deadlineExceeded || error == .readTimeout {
                outcome.hung += 1
                return outcome
            } catch {
                outcome.refused += 1
                return outcome
            }
        }
        return outcome
    }
}

/// The port the server listens on, once it does.
final class PortBox: @unchecked Sendable {
    private let lock = NSLock()
    private var port: Int?

    func set(_ value: Int) { lock.withLock { port = value } }

    var value: Int {
        get async {
            while true {
                if let port = lock.withLock({ port }) { return port }
                try? await Task.sleep(for: .milliseconds(5))
            }
        }
    }
}

final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    func increment() { lock.withLock { count += 1 } }
    var value: Int { lock.withLock { count } }
}
