import Foundation

/// Work run on a thread of its own while the caller does other work, its
/// result taken back with ``result()``, which waits for the thread to end.
/// A rebuild builds the index this way while it builds the views: the two
/// share no state, and each has a core.
///
/// ```swift
/// let index = try BackgroundWork("eventlog.rebuild.index") { try buildIndex() }
/// let views = try buildViews()
/// let built = try index.result()
/// ```
///
/// `@unchecked Sendable`: `outcome` is written by the thread before it
/// ends and read only after ``result()`` joined it.
final class BackgroundWork<Value>: @unchecked Sendable {
    private var outcome: Result<Value, any Error>?
    private var thread: JoinableThread?

    init(_ name: String, _ body: @escaping @Sendable () throws -> Value) throws {
        thread = try JoinableThread(name: name) { [self] in
            outcome = Result { try body() }
        }
    }

    /// Waits for the work to end; its value, or what it threw.
    func result() throws -> Value {
        thread?.join()
        return try outcome!.get()
    }

    deinit {
        thread?.join()
    }
}

/// A caller's progress closure, called from two threads one at a time.
final class SerializedProgress: @unchecked Sendable {
    private let lock = NSLock()
    private let body: ((ReplayProgress) -> Void)?

    init(_ body: ((ReplayProgress) -> Void)?) {
        self.body = body
    }

    var closure: ((ReplayProgress) -> Void)? {
        guard body != nil else { return nil }
        return { [self] step in
            lock.lock()
            defer { lock.unlock() }
            body?(step)
        }
    }
}
