import CLMDB
import Foundation

/// A read transaction open in the environment's reader table: which
/// process holds it and which commit it reads.
public struct ReaderSlot: Sendable, Equatable {
    public var pid: Int32
    /// The transaction id it reads (the commit it began after).
    public var transaction: Int
}

/// A C callback of `mdb_reader_list`: appends each line to the `[String]` behind `context`.
private func collectLine(_ message: UnsafePointer<CChar>?, _ context: UnsafeMutableRawPointer?) -> Int32 {
    guard let message, let context else { return -1 }
    context.assumingMemoryBound(to: [String].self).pointee.append(String(cString: message))
    return 0
}

extension Environment {
    /// The read transactions open now, in every process (`mdb_reader_list`):
    /// slots between transactions are left out. Empty when the environment
    /// is read without its lock file.
    ///
    /// A read transaction keeps every page its commit uses from being
    /// reused: the file grows while one stays open across many commits.
    /// The oldest's age in transactions (``EnvironmentInfo/lastTransaction``
    /// less its ``ReaderSlot/transaction``) says how much it holds back.
    public func readers() throws -> [ReaderSlot] {
        var lines: [String] = []
        try whileOpen {
            _ = withUnsafeMutablePointer(to: &lines) { mdb_reader_list(pointer, collectLine, $0) }
        }
        return lines.compactMap { line -> ReaderSlot? in
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count == 3, let pid = Int32(fields[0]), let transaction = Int(fields[2].trimmingCharacters(in: .whitespacesAndNewlines)) else {
                return nil
            }
            return ReaderSlot(pid: pid, transaction: transaction)
        }
    }
}
