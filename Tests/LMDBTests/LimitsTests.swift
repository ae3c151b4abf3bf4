import Foundation
import LMDB
import Testing

@Suite("LMDB limits")
struct LimitsTests {
    @Test("catch LMDBError.readersFull matches by code, whatever call returned it; other codes do not match")
    func matchingByName() {
        func classify(_ error: any Error) -> String {
            do { throw error } catch LMDBError.mapFull { return "mapFull" } catch LMDBError.readersFull { return "readersFull" } catch { return "other" }
        }
        #expect(classify(LMDBError(code: LMDBError.mapFull.code, call: "mdb_put(log)")) == "mapFull")
        #expect(classify(LMDBError(code: LMDBError.readersFull.code, call: "mdb_txn_begin")) == "readersFull")
        #expect(classify(LMDBError(code: LMDBError.notFound.code, call: "mdb_get")) == "other")
        #expect(classify(CocoaError(.fileNoSuchFile)) == "other")
    }

    @Test("1,025 read transactions at once on 1,024 reader slots: a clear error, not a crash, and the slots come back")
    func moreReadersThanSlots() throws {
        let path = temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let env = try Environment(path: path)
        #expect(env.options.maxReaders == 1024)
        var opened = 0
        var failure: LMDBError?
        func nest(_ depth: Int) throws {
            guard depth > 0 else { return }
            do {
                try env.read { _ in
                    opened += 1
                    try nest(depth - 1)
                }
            } catch let error as LMDBError where error == .readersFull && failure == nil {
                failure = error
            }
        }
        try nest(1025)
        #expect(opened == 1024)
        let error = try #require(failure)
        #expect("\(error)".contains("all 1024 reader slots are taken"), "\(error)")
        #expect("\(error)".contains("maxReaders"))
        // Every slot was released as the transactions ended.
        #expect(try env.read { _ in true })
        #expect(env.info().readersUsed <= 1024)
    }
}
