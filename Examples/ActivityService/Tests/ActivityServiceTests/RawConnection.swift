import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A plain TCP connection to the service on 127.0.0.1, for what a test
/// client that waits for whole responses cannot read: a stream of
/// server-sent events as it arrives. Blocking calls run on a thread of
/// their own, never on Swift concurrency's.
final class RawConnection: @unchecked Sendable {
    private let descriptor: Int32
    private var received: [UInt8] = []

    init(port: Int) throws {
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            close(descriptor)
            throw POSIXError(.init(rawValue: errno) ?? .ECONNREFUSED)
        }
    }

    deinit { close(descriptor) }

    func send(_ text: String) throws {
        let bytes = Array(text.utf8)
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { throw POSIXError(.init(rawValue: errno) ?? .EPIPE) }
            sent += n
        }
    }

    /// Everything received so far once `done` says it is enough; throws
    /// after `timeout` seconds, or when the peer closes first.
    func read(timeout: Double = 30, until done: @escaping @Sendable (String) -> Bool) async throws -> String {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread {
                continuation.resume(with: Result { try self.readBlocking(timeout: timeout, until: done) })
            }
        }
    }

    private func readBlocking(timeout: Double, until done: (String) -> Bool) throws -> String {
        let deadline = Date().addingTimeInterval(timeout)
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let text = String(decoding: received, as: UTF8.self)
            if done(text) { return text }
            let left = deadline.timeIntervalSinceNow
            guard left > 0 else { throw RawConnectionError("nothing matched within \(timeout) s; received: \(text)") }
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, Int32(left * 1000)) > 0 else { continue }
            let n = recv(descriptor, &buffer, buffer.count, 0)
            guard n > 0 else { throw RawConnectionError("the connection closed; received: \(text)") }
            received += buffer[0..<n]
        }
    }
}

struct RawConnectionError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
