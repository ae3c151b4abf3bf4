import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A thread that can be waited for to its very end (`pthread_create`,
/// `pthread_join`): once ``join()`` returns, the body has returned and
/// released everything it held. Foundation's `Thread` cannot be joined: a
/// store closed while its indexer's thread still held the environments
/// for a moment left them open, and opening the store again in the same
/// process failed ("already open in this process").
///
/// ```swift
/// let thread = try JoinableThread(name: "eventlog.index.apply") { run() }
/// thread.join()
/// ```
final class JoinableThread: @unchecked Sendable {
    private var thread: pthread_t
    private var joined = false
    private let lock = NSLock()

    private final class Body {
        let run: () -> Void
        let name: String
        init(_ run: @escaping () -> Void, name: String) {
            self.run = run
            self.name = name
        }
    }

    /// Starts `body` on a new thread with a stack of `stackSize` bytes.
    init(name: String, stackSize: Int = 8 << 20, _ body: @escaping @Sendable () -> Void) throws {
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setstacksize(&attributes, stackSize)
        let box = Unmanaged.passRetained(Body(body, name: name))
        var thread = pthread_t()
        let rc = pthread_create(&thread, &attributes, { argument in
            // Released when this returns: before `pthread_join` returns.
            let body = Unmanaged<Body>.fromOpaque(argument!).takeRetainedValue()
            Thread.current.name = body.name
            body.run()
            return nil
        }, box.toOpaque())
        guard rc == 0 else {
            box.release()
            throw EventLogError(.invalidArgument, operation: "start \(name)", "pthread_create: \(String(cString: strerror(rc)))")
        }
        self.thread = thread
    }

    /// Waits until the body has returned (`pthread_join`); later calls return at once.
    func join() {
        lock.lock()
        defer { lock.unlock() }
        guard !joined else { return }
        joined = true
        pthread_join(thread, nil)
    }
}
